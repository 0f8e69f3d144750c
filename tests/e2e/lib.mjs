/*
 * tests/e2e/lib.mjs - the harness shared by tests/e2e and tests/integration.
 *
 * Drives `glassbox mcp` over stdio with the official MCP SDK client, as an
 * agent would, against the local fixture site (fixtures/server.mjs).
 *
 *   GLASSBOX_BIN        the binary (default: build/glassbox under the repo)
 *   GLASSBOX_ARGS       extra arguments after `mcp`, split on spaces
 *   GLASSBOX_KEEP_DATA  set to 1 to keep each test file's data dir
 *
 * Each test file gets a fresh GLASSBOX_DATA_DIR under the system temp dir
 * and its own fixture server on 127.0.0.1. The SDK is resolved from this
 * folder's node_modules (npm ci in tests/e2e), so tests/integration imports
 * everything it needs from here.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { startFixtureServer } from '../../fixtures/server.mjs';

export { Client, StdioClientTransport, StreamableHTTPClientTransport, ElicitRequestSchema, startFixtureServer, assert };

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

/* Every core tool of the contract (docs/tools.md, Playwright MCP names);
 * the capability groups' tools are listed only when turned on. */
export const TOOL_NAMES = [
  'browser_navigate',
  'browser_navigate_back',
  'browser_snapshot',
  'browser_click',
  'browser_type',
  'browser_press_key',
  'browser_select_option',
  'browser_hover',
  'browser_evaluate',
  'browser_take_screenshot',
  'browser_handle_dialog',
  'browser_wait_for',
  'browser_tabs',
  'browser_close',
  'browser_session',
  'browser_fill_form',
  'browser_drag',
  'browser_find',
  'browser_resize',
  'browser_emulate_media',
  'browser_emulate',
  'browser_file_upload',
  'browser_drop',
  'browser_console_messages',
  'browser_network_requests',
  'browser_network_request',
];

const STDERR_MAX_CHARS = 4 << 20;

export function glassboxBin() {
  const bin = process.env.GLASSBOX_BIN || 'build/glassbox';
  return path.isAbsolute(bin) ? bin : path.join(REPO_ROOT, bin);
}

export function newDataDir(prefix = 'glassbox-test-') {
  return fs.mkdtempSync(path.join(os.tmpdir(), prefix));
}

/*
 * Spawns `glassbox mcp` with GLASSBOX_DATA_DIR=dataDir (a fresh temp dir
 * unless given) and connects an SDK client (initialize + initialized).
 *   config        the policy file (default $GLASSBOX_CONFIG, else
 *                 fixtures/policy/loopback.json)
 *   env           more environment variables for glassbox (e.g. GLASSBOX_CHROMIUM)
 *   args          more arguments after `glassbox mcp` (e.g. ['--viewport-size', '800x600'])
 *   capabilities  the client's capabilities (default {}), e.g. {elicitation: {}}
 *   clientOptions more options of the SDK Client (e.g. its jsonSchemaValidator)
 *   setupClient   called with the Client before it connects (to set
 *                 request handlers such as ElicitRequestSchema's)
 * Returns {client, transport, dataDir, pid, stderr(), close(), removeDataDir()}.
 * close() is idempotent; it does not remove the data dir.
 */
export async function openGlassbox({ dataDir, config, env, args = [], capabilities = {}, clientOptions = {}, setupClient } = {}) {
  const bin = glassboxBin();
  try {
    fs.accessSync(bin, fs.constants.X_OK);
  } catch {
    throw new Error(`glassbox binary not found or not executable at ${bin}: build it (meson setup build && ninja -C build) or set GLASSBOX_BIN`);
  }
  const dir = dataDir || newDataDir();
  const extra = (process.env.GLASSBOX_ARGS || '').split(' ').filter(Boolean);
  const transport = new StdioClientTransport({
    command: bin,
    args: ['mcp', ...extra, ...args],
    // the fixture site is on loopback, which the default policy refuses
    env: {
      ...process.env,
      GLASSBOX_DATA_DIR: dir,
      GLASSBOX_CONFIG: config || process.env.GLASSBOX_CONFIG || path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'),
      ...env,
    },
    stderr: 'pipe',
    cwd: REPO_ROOT,
  });
  let stderrText = '';
  transport.stderr?.on('data', (d) => {
    if (stderrText.length < STDERR_MAX_CHARS) stderrText += d.toString('utf8');
  });
  const client = new Client({ name: 'glassbox-tests', version: '1.0.0' }, { ...clientOptions, capabilities });
  if (setupClient) setupClient(client);
  await client.connect(transport);
  let closed = false;
  const gb = {
    client,
    transport,
    dataDir: dir,
    pid: transport.pid,
    stderr: () => stderrText,
    async close() {
      if (closed) return;
      closed = true;
      await client.close();
    },
    removeDataDir() {
      if (process.env.GLASSBOX_KEEP_DATA === '1') {
        process.stderr.write(`kept data dir ${dir}\n`);
        return;
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return gb;
}

/*
 * Registers before/after hooks for one test file: a fixture server and a
 * glassbox session with its own data dir. Returns an object whose members
 * (fixture, gb, client, url(path)) are set once `before` has run.
 * options: called in `before`, once the fixture server runs, for
 * openGlassbox's options (a data dir, a policy file...).
 */
export function useGlassbox({ keepOpen = false, options = () => ({}) } = {}) {
  const h = {
    fixture: null,
    gb: null,
    client: null,
    url: (p) => h.fixture.url + p,
  };
  before(async () => {
    h.fixture = await startFixtureServer();
    h.gb = await openGlassbox(await options());
    h.client = h.gb.client;
  });
  after(async () => {
    if (h.gb && !keepOpen) {
      await h.gb.close();
      h.gb.removeDataDir();
    }
    if (h.fixture) await h.fixture.close();
  });
  return h;
}

/*
 * Registers an after hook for one test file and returns {session(policy),
 * url(path)}. session() opens glassbox, on a data dir of its own, with
 * the loopback test policy (fixtures/policy/loopback.json) plus the
 * members of policy, and starts the fixture server on first use; url()
 * is a page of that server. After the file, every session is closed and
 * its data dir and policy file removed, and the fixture server closed.
 */
export function usePolicySessions() {
  let fixture = null;
  const opened = [];
  after(async () => {
    for (const { gb, dir } of opened) {
      await gb.close();
      gb.removeDataDir();
      fs.rmSync(dir, { recursive: true, force: true });
    }
    await fixture?.close();
  });
  return {
    async session(policy) {
      if (!fixture) fixture = await startFixtureServer();
      const dir = fs.mkdtempSync('/tmp/glassbox-policy-');
      const cfg = path.join(dir, 'policy.json');
      const base = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
      fs.writeFileSync(cfg, JSON.stringify({ ...base, ...policy }));
      const gb = await openGlassbox({ config: cfg });
      opened.push({ gb, dir });
      return gb;
    },
    url: (p) => fixture.url + p,
  };
}

/* ---- tool results ------------------------------------------------------ */

/* Calls a tool; returns the CallToolResult. opts: SDK RequestOptions. */
export async function callTool(client, name, args = {}, opts = undefined) {
  return client.callTool({ name, arguments: args }, undefined, opts);
}

/* All text items of a result, joined with newlines. */
export function textOf(result) {
  return (result?.content || [])
    .filter((c) => c.type === 'text')
    .map((c) => c.text)
    .join('\n');
}

export function sc(result) {
  return result?.structuredContent || {};
}

/* A readable dump of a result for assertion messages (images elided). */
export function dump(result) {
  const copy = {
    ...result,
    content: (result?.content || []).map((c) => (c.type === 'image' ? { ...c, data: `<${c.data?.length} base64 chars>` } : c)),
  };
  const s = JSON.stringify(copy, null, 1);
  return s.length > 6000 ? s.slice(0, 6000) + '…' : s;
}

/* The verdict of a result for one check (url, title, text, value, ...), asserted to be there. */
export function verdictOf(result, check) {
  const v = (sc(result).verdicts || []).find((x) => x.check === check);
  assert.ok(v, `a verdict for ${check} expected: ${dump(result)}`);
  return v;
}

/* Asserts the call succeeded; returns the result. */
export function assertOk(result, what = 'tool call') {
  assert.ok(result && !result.isError, `${what} failed: ${dump(result)}`);
  if (result.structuredContent && 'ok' in result.structuredContent)
    assert.equal(result.structuredContent.ok, true, `${what}: structuredContent.ok is not true: ${dump(result)}`);
  return result;
}

/* Asserts the call failed as a tool error (isError, ok false); returns its text. */
export function assertToolError(result, what = 'tool call') {
  assert.equal(result?.isError, true, `${what} should have failed: ${dump(result)}`);
  if (result.structuredContent && 'ok' in result.structuredContent)
    assert.equal(result.structuredContent.ok, false, `${what}: ok should be false: ${dump(result)}`);
  const text = textOf(result);
  assert.ok(text.length > 0, `${what}: an error needs a text for the model: ${dump(result)}`);
  return text;
}

/* Calls a tool and asserts success. */
export async function ok(client, name, args = {}, opts = undefined) {
  return assertOk(await callTool(client, name, args, opts), `${name}(${JSON.stringify(args)})`);
}

export async function navigate(client, url, extra = {}) {
  return ok(client, 'browser_navigate', { url, ...extra });
}

/* Runs a function in the page and returns its value (structuredContent.result). */
export async function evaluate(client, fn, extra = {}) {
  const r = await ok(client, 'browser_evaluate', { function: fn, ...extra });
  return sc(r).result;
}

/* The text of the element matching a CSS selector in the main frame (null when absent). */
export async function textContent(client, selector) {
  return evaluate(client, `() => { const e = document.querySelector(${JSON.stringify(selector)}); return e ? e.textContent : null; }`);
}

/* ---- snapshots --------------------------------------------------------- */

/*
 * Parses the snapshot YAML (Playwright's shape) into its nodes that carry a
 * ref:  - button "Save" [ref=e5]   →  {role: "button", name: "Save", ref: "e5", depth}
 * Lines are matched wherever they appear in the text (the YAML may sit in
 * a fenced block after a header).
 */
export function parseSnapshot(text) {
  const nodes = [];
  const re = /^(\s*)- ([A-Za-z][\w-]*)(?: "((?:[^"\\]|\\.)*)")?(.*)$/;
  for (const line of String(text).split('\n')) {
    const m = re.exec(line);
    if (!m) continue;
    const refm = /\[ref=([A-Za-z0-9_-]+)\]/.exec(m[4]);
    if (!refm) continue;
    let name = m[3];
    if (name !== undefined) {
      try {
        name = JSON.parse(`"${name}"`);
      } catch {
        /* keep the raw text */
      }
    }
    nodes.push({ role: m[2], name: name ?? '', ref: refm[1], depth: m[1].length, line });
  }
  return nodes;
}

/* Takes a snapshot; returns {result, text, nodes}. */
export async function snapshot(client, args = {}) {
  const result = await ok(client, 'browser_snapshot', args);
  const text = textOf(result);
  return { result, text, nodes: parseSnapshot(text) };
}

/*
 * The ref of the node with this role whose accessible name equals name (a
 * string) or matches it (a RegExp). Fails with the snapshot in the message.
 */
export function findRef(snap, role, name) {
  const nodes = snap.nodes || parseSnapshot(snap.text ?? snap);
  const hit = nodes.find(
    (n) => n.role === role && (name instanceof RegExp ? name.test(n.name) : n.name === name),
  );
  assert.ok(hit, `no ${role} named ${name} in the snapshot:\n${(snap.text ?? snap).slice(0, 4000)}`);
  return hit.ref;
}

/* ---- evidence and PNGs ------------------------------------------------- */

export const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export function isPng(buf) {
  return Buffer.isBuffer(buf) && buf.length > 24 && buf.subarray(0, 8).equals(PNG_SIGNATURE);
}

/* Width and height from the IHDR chunk. */
export function pngSize(buf) {
  assert.ok(isPng(buf), 'not a PNG');
  assert.equal(buf.subarray(12, 16).toString('latin1'), 'IHDR', 'the first PNG chunk must be IHDR');
  return { width: buf.readUInt32BE(16), height: buf.readUInt32BE(20) };
}

export function sha256(buf) {
  return crypto.createHash('sha256').update(buf).digest('hex');
}

/* The image items of a result, decoded. */
export function imagesOf(result) {
  return (result?.content || [])
    .filter((c) => c.type === 'image')
    .map((c) => ({ mimeType: c.mimeType, data: Buffer.from(c.data, 'base64') }));
}

export function resourceLinksOf(result) {
  return (result?.content || []).filter((c) => c.type === 'resource_link');
}

/* ---- processes and files ----------------------------------------------- */

/*
 * What the command lines of the Chromium processes of dir (a data dir, or
 * one session's dir under its run/) contain: dir itself (a user-data-dir
 * under it), or, for browsers that run as users of their own, their homes'
 * names: /tmp/gb-browsers/TAG-SESSION, TAG read from run/.browsers-tag.
 */
export function browserNeedles(dir) {
  const needles = [dir];
  const tagIn = (file) => {
    try {
      const tag = fs.readFileSync(file, 'latin1').trim();
      return /^[0-9a-f]{8}$/.test(tag) ? tag : null;
    } catch {
      return null;
    }
  };
  const ofData = tagIn(path.join(dir, 'run', '.browsers-tag'));
  if (ofData) needles.push(`/tmp/gb-browsers/${ofData}-`);
  const ofSession = tagIn(path.join(path.dirname(dir), '.browsers-tag'));
  if (ofSession) needles.push(`/tmp/gb-browsers/${ofSession}-${path.basename(dir)}/`);
  return needles;
}

/* The entries of a run dir that are sessions' (its .browsers-tag is not). */
export function runEntries(run) {
  return fs.existsSync(run) ? fs.readdirSync(run).filter((n) => !n.startsWith('.')) : [];
}

/*
 * The user-data-dirs of the sessions running under data dir dataDir: in
 * each session's run dir, or in its browser user's home (named by
 * run/.browsers-tag and the session id).
 */
export function profileDirs(dataDir) {
  const run = path.join(dataDir, 'run');
  let tag = '';
  try { tag = fs.readFileSync(path.join(run, '.browsers-tag'), 'latin1').trim(); } catch { /* none */ }
  const out = [];
  for (const id of fs.readdirSync(run)) {
    for (const dir of [path.join(run, id, 'profile'), `/tmp/gb-browsers/${tag}-${id}/profile`])
      if (fs.existsSync(dir)) out.push(dir);
  }
  return out;
}

/*
 * Pids of the Chromium processes of data dir dir (see browserNeedles).
 * Reads /proc; skips this process and glassbox itself (whose command line
 * names neither).
 */
export function chromiumPids(dir) {
  const pids = [];
  const needles = browserNeedles(dir);
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent) || Number(ent) === process.pid) continue;
    let cmd;
    try {
      cmd = fs.readFileSync(`/proc/${ent}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    if (!cmd) continue;
    const args = cmd.split('\0');
    // Chromium's helpers rewrite their title: one string, arguments joined by spaces
    if (!/chrom/i.test(path.basename((args[0] || '').split(' ')[0]))) continue;
    if (!needles.some((n) => cmd.includes(n))) continue;
    let st = '';
    try {
      st = fs.readFileSync(`/proc/${ent}/stat`, 'latin1');
    } catch {
      continue;
    }
    if (/\) Z /.test(st)) continue; // zombies are gone already
    pids.push(Number(ent));
  }
  return pids;
}

/* 1 when process pid still exists (a zombie too: signal 0 reaches it). */
export function pidAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/* Ends glassbox (openGlassbox's gb) as a client going away does (stdin
 * closed), and waits for its exit however long its cleanup takes on a
 * loaded machine (the SDK's close() would SIGKILL it after 4 s, which is
 * what orphans are made of). */
export async function closeGently(gb) {
  const pid = gb.pid;
  gb.transport._process?.stdin?.end();
  await pollUntil(() => !pidAlive(pid), { deadlineMs: 60000 });
  await gb.close();
}

/* Polls fn until it returns a truthy value or deadlineMs passes; returns the last value. */
export async function pollUntil(fn, { deadlineMs = 15000, intervalMs = 100 } = {}) {
  const end = Date.now() + deadlineMs;
  let v = await fn();
  while (!v && Date.now() < end) {
    await new Promise((r) => setTimeout(r, intervalMs));
    v = await fn();
  }
  return v;
}

/* Every regular file under dir (symlinks not followed). */
export function listFiles(dir) {
  const out = [];
  const walk = (d) => {
    let ents;
    try {
      ents = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of ents) {
      const p = path.join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/* The text of a tenant's audit logs (DATA/tenants/T/audit/*.jsonl), not
 * of a writer's temporary file, which may vanish while it is listed. */
export function auditText(dataDir, tenant) {
  return listFiles(path.join(dataDir, 'tenants', tenant, 'audit'))
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => fs.readFileSync(f, 'utf8'))
    .join('');
}

/* The audit records of tenant (default "local") in dataDir, oldest first:
 * whole lines only (a record being appended while this reads is left for
 * the next read). */
export function auditRecords(dataDir, tenant = 'local') {
  const lines = auditText(dataDir, tenant).split('\n');
  lines.pop(); // after the last newline: "" or a line still being written
  return lines.filter(Boolean).map((l) => JSON.parse(l));
}

/* Files under dir whose bytes contain needle (as UTF-8, and as UTF-16LE). */
export function filesContaining(dir, needle) {
  const forms = [Buffer.from(needle, 'utf8'), Buffer.from(needle, 'utf16le')];
  const hits = [];
  for (const f of listFiles(dir)) {
    let buf;
    try {
      buf = fs.readFileSync(f);
    } catch {
      continue; // vanished (a browser temp file) or unreadable socket
    }
    if (forms.some((n) => buf.includes(n))) hits.push(f);
  }
  return hits;
}

/* Decodes an 8-bit, non-interlaced RGB or RGBA PNG (as Chromium and
 * libpng write them): {width, height, px(x, y) -> [r, g, b]}. */
export function decodePng(buf) {
  let off = 8;
  let width = 0;
  let height = 0;
  let channels = 0;
  const idat = [];
  while (off < buf.length) {
    const len = buf.readUInt32BE(off);
    const type = buf.toString('latin1', off + 4, off + 8);
    const data = buf.subarray(off + 8, off + 8 + len);
    if (type === 'IHDR') {
      width = data.readUInt32BE(0);
      height = data.readUInt32BE(4);
      assert.equal(data[8], 8, 'bit depth');
      assert.equal(data[12], 0, 'interlace');
      channels = { 2: 3, 6: 4 }[data[9]];
      assert.ok(channels, `colour type ${data[9]}`);
    } else if (type === 'IDAT') idat.push(data);
    off += 12 + len;
  }
  const raw = zlib.inflateSync(Buffer.concat(idat));
  const stride = width * channels;
  const out = Buffer.alloc(stride * height);
  for (let y = 0; y < height; y++) {
    const f = raw[y * (stride + 1)];
    for (let i = 0; i < stride; i++) {
      const x = raw[y * (stride + 1) + 1 + i];
      const a = i >= channels ? out[y * stride + i - channels] : 0;
      const b = y > 0 ? out[(y - 1) * stride + i] : 0;
      const c = i >= channels && y > 0 ? out[(y - 1) * stride + i - channels] : 0;
      let v;
      if (f === 0) v = x;
      else if (f === 1) v = x + a;
      else if (f === 2) v = x + b;
      else if (f === 3) v = x + ((a + b) >> 1);
      else {
        const p = a + b - c;
        const pa = Math.abs(p - a);
        const pb = Math.abs(p - b);
        const pc = Math.abs(p - c);
        v = x + (pa <= pb && pa <= pc ? a : pb <= pc ? b : c);
      }
      out[y * stride + i] = v & 0xff;
    }
  }
  return { width, height, px: (x, y) => [...out.subarray((y * width + x) * channels, (y * width + x) * channels + 3)] };
}
