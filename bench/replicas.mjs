#!/usr/bin/env node
// bench/replicas.mjs: what HAProxy in front of a replica costs a tool call, and how many sessions
// one replica holds.
//
//   node bench/replicas.mjs [--calls N] [--sessions K] [--memory-mib M] [--glassbox PATH] [--haproxy-cfg FILE] [--out FILE]
//
// One `glassbox serve` (replica r1) and HAProxy with the shipped config (deploy/haproxy/haproxy.cfg;
// its other two servers point at closed ports and are down). One session on the replica, having
// navigated the bench site, reached by two clients: one connected directly, one through HAProxy (its
// requests routed by Mcp-Session-Id); so both paths drive the same session and the same browser.
// Then N rounds (default 500), each a browser_snapshot and a JSON-RPC ping on each path, the order
// alternating per round so that both see the same machine. Reported: median and p95 of each path;
// the ratios proxied / direct of the medians and of the p95s; and the rounds' paired differences
// (proxied - direct, measured back to back), whose median is what the hop adds while the machine's
// swings between rounds cancel out. The ping is the transport alone: HTTP in and out, no browser.
// Then what a streamed answer's first event waits: HAProxy's r2 is a small origin here that
// answers like glassbox's SSE answers do when they wait on the client (an elicitation, then
// nothing until the person answers): one event, then the stream held open for a second; the time
// to that first event, through HAProxy (Mcp-Session-Id r2.…) and directly. Not glassbox: what the
// proxy does to any stream. Then K sessions (default 4) through HAProxy, each having navigated:
// the memory (PSS) of their browsers and of glassbox, as MiB per session, and how many sessions fit
// in a replica of M MiB (default 2560, the StatefulSet's limit). JSON: bench/results/replicas.json.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSite } from './lib/site-server.mjs';
import { memOf, killTree } from './lib/proc.mjs';
import { summary, round, median, percentile } from './lib/stats.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseArgs(argv) {
  const o = { calls: 500, sessions: 4, memoryMib: 2560, glassbox: process.env.GLASSBOX_BIN || path.join(ROOT, 'build', 'glassbox'),
    haproxyCfg: path.join(ROOT, 'deploy', 'haproxy', 'haproxy.cfg'), out: path.join(ROOT, 'bench', 'results', 'replicas.json') };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--calls') o.calls = Number(v), i++;
    else if (argv[i] === '--sessions') o.sessions = Number(v), i++;
    else if (argv[i] === '--memory-mib') o.memoryMib = Number(v), i++;
    else if (argv[i] === '--glassbox') o.glassbox = v, i++;
    else if (argv[i] === '--haproxy-cfg') o.haproxyCfg = path.resolve(v), i++;
    else if (argv[i] === '--out') o.out = v, i++;
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return o;
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startReplica(opts) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-replicas-'));
  const token = crypto.randomBytes(24).toString('hex');
  const port = await freePort();
  const adminPort = await freePort();
  const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');
  const config = {
    listen: { host: '127.0.0.1', port },
    admin: { host: '127.0.0.1', port: adminPort, token_sha256: sha(crypto.randomBytes(8).toString('hex')) },
    limits: { max_sessions: opts.sessions + 4, idle_ttl_s: 3600 },
    replica: { id: 'r1' },
    tenants: { bench: { token_sha256: sha(token), max_sessions: opts.sessions + 4,
      policy: { egress: { allow_private: ['127.0.0.1:*'] }, risk: { evaluate: 'allow' } } } },
  };
  await writeFile(path.join(dir, 'serve.json'), JSON.stringify(config), { mode: 0o600 });
  const proc = spawn(opts.glassbox, ['serve', '--config', path.join(dir, 'serve.json')], {
    env: { ...process.env, GLASSBOX_DATA_DIR: path.join(dir, 'data'), GLASSBOX_LOG: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  for (let i = 0; i < 600 && !/admin on http/.test(stderr); i++) await sleep(50);
  if (!/admin on http/.test(stderr)) throw new Error(`glassbox serve did not start:\n${stderr}`);
  return { proc, dir, token, port, adminPort, url: `http://127.0.0.1:${port}/mcp` };
}

// An origin that streams as an SSE answer waiting on its client does: one event, then nothing for
// holdMs, then the end. Its /readyz says 503 (draining), so that HAProxy sends it no new session;
// requests of its sessions (r2.…) still reach it (force-persist).
async function startStreamer(holdMs = 1000) {
  const port = await freePort();
  const srv = http.createServer((req, res) => {
    if (req.url === '/readyz') {
      res.statusCode = 503;
      return res.end('draining\n');
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.write('event: message\ndata: {"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}\n\n');
    setTimeout(() => res.end(), holdMs);
  });
  await new Promise((r) => srv.listen(port, '127.0.0.1', r));
  return { port, close: () => new Promise((r) => srv.close(r)) };
}

// Time (ms) to the first bytes of the answer to a POST to port's /mcp as session sid.
function firstEvent(port, sid, agent) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const req = http.request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', agent,
      headers: { 'mcp-session-id': sid, 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
      let first = null;
      res.on('data', () => { if (first === null) first = performance.now() - t0; });
      res.on('end', () => resolve(first));
    });
    req.on('error', reject);
    req.end('{"jsonrpc":"2.0","id":1,"method":"ping"}');
  });
}

async function startHaproxy(replica, cfg, streamer) {
  const port = await freePort();
  const env = { ...process.env, GLASSBOX_LISTEN: `127.0.0.1:${port}`, GLASSBOX_R1: `127.0.0.1:${replica.port}`,
    GLASSBOX_R1_ADMIN_PORT: String(replica.adminPort), GLASSBOX_R2: `127.0.0.1:${streamer.port}`, GLASSBOX_R2_ADMIN_PORT: String(streamer.port),
    GLASSBOX_R3: '127.0.0.1:9', GLASSBOX_R3_ADMIN_PORT: '9' };
  // r3 points at a closed port and is down
  // the config's errorfiles are relative to its own dir (default-path config)
  const proc = spawn('haproxy', ['-db', '-f', cfg], { env, stdio: 'ignore' });
  await sleep(1500);
  return { proc, port, url: `http://127.0.0.1:${port}/mcp` };
}

// PSS (kB) of the replica's browsers: Chromium processes whose command line names its data dir
// or its browsers' dirs (/tmp/gb-browsers/<tag>-..., the tag in DATA/run/.browsers-tag).
function browsersPss(dataDir) {
  const needles = [dataDir];
  try {
    needles.push(`/tmp/gb-browsers/${readFileSync(path.join(dataDir, 'run', '.browsers-tag'), 'latin1').trim()}-`);
  } catch {}
  let kb = 0;
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!needles.some((n) => cmd.includes(n)) || !/chrom/i.test(cmd)) continue;
    const m = memOf(Number(pid));
    if (Number.isFinite(m.pss)) kb += m.pss;
  }
  return kb;
}

// A client of url; with of (another client's {transport}), one more client of that session, which
// it joins without initializing again.
async function connect(url, token, of) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } },
    sessionId: of ? of.transport.sessionId : undefined });
  if (of) transport.setProtocolVersion(of.transport.protocolVersion);
  const client = new Client({ name: 'bench-replicas', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function ping(client) {
  const t0 = performance.now();
  await client.ping({ timeout: 120000 });
  return performance.now() - t0;
}

async function call(client, name, args) {
  const t0 = performance.now();
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  return ms;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const site = await startSite(path.join(ROOT, 'bench', 'site'));
  const replica = await startReplica(opts);
  const streamer = await startStreamer();
  const lb = await startHaproxy(replica, opts.haproxyCfg, streamer);
  const result = { machine: { cpus: os.cpus().length, load1: round(os.loadavg()[0], 2) }, calls: opts.calls };
  try {
    const direct = await connect(replica.url, replica.token);
    const proxied = await connect(lb.url, replica.token, direct);
    if (proxied.transport.sessionId !== direct.transport.sessionId) throw new Error('the proxied client is not on the same session');
    await call(direct.client, 'browser_navigate', { url: site.formUrl });
    const times = { snapshot: { direct: [], proxied: [] }, ping: { direct: [], proxied: [] } };
    for (let i = 0; i < 10; i++) for (const s of [direct, proxied]) { await call(s.client, 'browser_snapshot', {}); await ping(s.client); } // warm-up
    for (let i = 0; i < opts.calls; i++) {
      const order = i % 2 ? [['proxied', proxied], ['direct', direct]] : [['direct', direct], ['proxied', proxied]];
      for (const [k, s] of order) times.snapshot[k].push(await call(s.client, 'browser_snapshot', {}));
      for (const [k, s] of order) times.ping[k].push(await ping(s.client));
    }
    for (const what of ['snapshot', 'ping']) {
      const t = times[what];
      const diff = t.proxied.map((x, i) => x - t.direct[i]);
      result[what] = { direct: summary(t.direct), proxied: summary(t.proxied),
        paired_diff_ms: { median: round(median(diff), 2), p95: round(percentile(diff, 95), 2) } };
      result[what].ratio_median = round(result[what].proxied.median / result[what].direct.median, 3);
      result[what].ratio_p95 = round(result[what].proxied.p95 / result[what].direct.p95, 3);
    }
    await proxied.client.close();
    await direct.transport.terminateSession();
    await direct.client.close();
    const agent = new http.Agent({ keepAlive: true });
    const first = { direct: [], proxied: [] };
    for (let i = 0; i < 20; i++) {
      first.direct.push(await firstEvent(streamer.port, 'r2.bench', agent));
      first.proxied.push(await firstEvent(lb.port, 'r2.bench', agent));
    }
    agent.destroy();
    result.stream_first_event = { direct: summary(first.direct), proxied: summary(first.proxied) };
    await sleep(3000);
    const base = browsersPss(path.join(replica.dir, 'data'));
    const own = memOf(replica.proc.pid).pss;
    const many = [];
    for (let i = 0; i < opts.sessions; i++) {
      const s = await connect(lb.url, replica.token);
      await call(s.client, 'browser_navigate', { url: site.formUrl });
      many.push(s);
    }
    await sleep(2000);
    const pss = browsersPss(path.join(replica.dir, 'data')) - base;
    const ownAfter = memOf(replica.proc.pid).pss;
    const perSession = (pss + (ownAfter - own)) / 1024 / opts.sessions;
    result.memory = { sessions: opts.sessions, browsers_pss_mib: round(pss / 1024), glassbox_pss_mib: round(ownAfter / 1024),
      per_session_mib: round(perSession), replica_limit_mib: opts.memoryMib,
      sessions_per_replica: Math.floor((opts.memoryMib - ownAfter / 1024) / perSession) };
    for (const s of many) { await s.transport.terminateSession().catch(() => {}); await s.client.close(); }
  } finally {
    lb.proc.kill('SIGTERM');
    replica.proc.kill('SIGTERM');
    await Promise.race([new Promise((r) => replica.proc.on('exit', r)), sleep(60000)]);
    await killTree(replica.proc.pid, { rootIsGroupLeader: true }).catch(() => {});
    await rm(replica.dir, { recursive: true, force: true });
    await site.close();
    await streamer.close();
  }
  for (const what of ['snapshot', 'ping']) {
    const s = result[what];
    console.log(`${what === 'ping' ? 'ping (the transport alone)' : 'browser_snapshot'}, ms, ${s.direct.n} rounds   median    p95`);
    console.log(`  direct to the replica   ${String(s.direct.median).padStart(6)} ${String(s.direct.p95).padStart(6)}`);
    console.log(`  through HAProxy         ${String(s.proxied.median).padStart(6)} ${String(s.proxied.p95).padStart(6)}`);
    console.log(`  ratio                   ${String(s.ratio_median).padStart(6)} ${String(s.ratio_p95).padStart(6)}`);
    console.log(`  paired difference       ${String(s.paired_diff_ms.median).padStart(6)} ${String(s.paired_diff_ms.p95).padStart(6)}`);
  }
  const f = result.stream_first_event;
  console.log(`a held SSE stream's first event, ms (median, max of ${f.direct.n}): direct ${f.direct.median}, ${f.direct.max}; through HAProxy ${f.proxied.median}, ${f.proxied.max}`);
  const m = result.memory;
  console.log(`memory: ${m.per_session_mib} MiB a session (${m.sessions} sessions, browsers ${m.browsers_pss_mib} MiB PSS, glassbox ${m.glassbox_pss_mib} MiB): ${m.sessions_per_replica} sessions in ${m.replica_limit_mib} MiB`);
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, JSON.stringify(result, null, 2));
}

main().catch((e) => { console.error(e); process.exit(2); });
