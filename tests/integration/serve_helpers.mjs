/*
 * serve_helpers.mjs - starts `glassbox serve` with a generated config and
 * connects the official SDK's StreamableHTTPClientTransport to it, as a
 * tenant's agent would.
 *
 *   const svc = await startServe({tenants: {a: {}, b: {max_sessions: 2}}, limits: {...}});
 *   const c = await svc.connect('a');          // {client, transport, sessionId}
 *   await svc.rawPost('a', body, headers)      // a fetch to /mcp with a's token
 *   await svc.stop('SIGTERM')                  // -> {code, signal}
 *
 * Each tenant gets a random token (only its SHA-256 goes in the config)
 * and the loopback test policy unless it names its own.
 */
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Client, StreamableHTTPClientTransport, REPO_ROOT, glassboxBin, newDataDir, chromiumPids, pollUntil, assert } from '../e2e/lib.mjs';

export { StreamableHTTPClientTransport };

const LOOPBACK_POLICY = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));

export const sha256hex = (s) => crypto.createHash('sha256').update(s).digest('hex');

/*
 * Starts glassbox serve. tenants: {name: {policy?, max_sessions?,
 * tool_calls_per_session?, action_timeout_ms?}}; limits, prelaunch, store:
 * as in docs/service.md; admin: true for an admin listener. dataDir: reuse
 * one. env: more environment for the process. extra: more top-level
 * config (object_store, replica); tokens, adminToken: reuse another
 * replica's; port, adminPort: fixed ports (a restarted replica keeps its
 * address). console: the web console's {frames_per_second?, credentials:
 * [{id, name, tenant, role}]} (each credential gets a random token:
 * svc.consoleTokens[id]).
 */
export async function startServe({ tenants, limits = {}, admin = false, prelaunch, dataDir, warmPool, store, env = {}, extra = {}, tokens: givenTokens, adminToken: givenAdminToken, port: givenPort = 0, adminPort: givenAdminPort = 0, console: consoleCfg } = {}) {
  const dir = dataDir || newDataDir('glassbox-serve-');
  const tokens = { ...(givenTokens || {}) };
  const cfgTenants = {};
  for (const [name, t] of Object.entries(tenants)) {
    tokens[name] = tokens[name] || crypto.randomBytes(24).toString('hex');
    cfgTenants[name] = { token_sha256: sha256hex(tokens[name]), policy: t.policy || LOOPBACK_POLICY };
    for (const k of ['max_sessions', 'tool_calls_per_session', 'action_timeout_ms'])
      if (t[k] !== undefined) cfgTenants[name][k] = t[k];
  }
  const config = { listen: { host: '127.0.0.1', port: givenPort }, limits, tenants: cfgTenants, ...extra };
  const adminToken = givenAdminToken || crypto.randomBytes(24).toString('hex');
  if (admin) config.admin = { host: '127.0.0.1', port: givenAdminPort, token_sha256: sha256hex(adminToken) };
  // console: {frames_per_second?, credentials: [{id, name, tenant, role}]}: each gets a random token
  const consoleTokens = {};
  if (consoleCfg) {
    config.console = { ...consoleCfg, credentials: (consoleCfg.credentials || []).map((c) => {
      consoleTokens[c.id] = crypto.randomBytes(24).toString('hex');
      return { ...c, token_sha256: sha256hex(consoleTokens[c.id]) };
    }) };
  }
  if (prelaunch !== undefined) config.prelaunch = prelaunch;
  if (warmPool !== undefined) config.warm_pool = warmPool;
  if (store !== undefined) config.store = store;
  const cfgPath = path.join(dir, 'serve-test.json');
  fs.writeFileSync(cfgPath, JSON.stringify(config), { mode: 0o600 });

  const proc = spawn(glassboxBin(), ['serve', '--config', cfgPath], {
    env: { ...process.env, ...env, GLASSBOX_DATA_DIR: dir },
    stdio: ['ignore', 'ignore', 'pipe'],
    cwd: REPO_ROOT,
  });
  let stderr = '';
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  proc.stderr.on('data', (d) => {
    if (stderr.length < 8 << 20) stderr += d.toString('utf8');
  });
  const port = await pollUntil(() => (stderr.match(/MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/) || [])[1], { deadlineMs: 15000 });
  // the admin line follows the MCP one, maybe in a later write
  const adminPort = admin
    ? await pollUntil(() => (stderr.match(/admin on http:\/\/127\.0\.0\.1:(\d+)\//) || [])[1], { deadlineMs: 15000 })
    : undefined;
  if (!port || (admin && !adminPort)) {
    proc.kill('SIGKILL');
    throw new Error(`glassbox serve did not start:\n${stderr}`);
  }
  const url = `http://127.0.0.1:${port}/mcp`;
  const clients = [];

  const svc = {
    proc,
    pid: proc.pid,
    dataDir: dir,
    configPath: cfgPath,
    url,
    tokens,
    adminToken,
    consoleTokens,
    adminUrl: adminPort ? `http://127.0.0.1:${adminPort}` : undefined,
    stderr: () => stderr,
    exited,
    /* An SDK client of tenant name, connected (initialize done). A
     * session that is still closing counts against its tenant until its
     * browser is gone: a 429 that names closing sessions is retried. */
    async connect(name, { capabilities = {}, setupClient } = {}) {
      const deadline = Date.now() + 30000;
      for (;;) {
        const transport = new StreamableHTTPClientTransport(new URL(url), {
          requestInit: { headers: { Authorization: `Bearer ${tokens[name]}` } },
        });
        const client = new Client({ name: `serve-test-${name}`, version: '1.0.0' }, { capabilities });
        if (setupClient) setupClient(client);
        try {
          await client.connect(transport);
        } catch (err) {
          const closing = /(\d+) still closing/.exec(String(err.message));
          if (err.code === 429 && closing && Number(closing[1]) > 0 && Date.now() < deadline) {
            await new Promise((res) => setTimeout(res, 200));
            continue;
          }
          throw err;
        }
        clients.push(client);
        return { client, transport, sessionId: transport.sessionId };
      }
    },
    /* POST body (an object or a string) to /mcp as tenant name (null: no token). */
    async rawPost(name, body, headers = {}) {
      const h = {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...(name ? { authorization: `Bearer ${tokens[name]}` } : {}),
        ...headers,
      };
      const res = await fetch(url, { method: 'POST', headers: h, body: typeof body === 'string' ? body : JSON.stringify(body) });
      const text = await res.text();
      return { status: res.status, headers: res.headers, text, json: safeJson(text) };
    },
    /* An admin request: {status, json, text}. */
    async admin(method, p, { token = adminToken } = {}) {
      const res = await fetch(svc.adminUrl + p, { method, headers: token ? { authorization: `Bearer ${token}` } : {} });
      const text = await res.text();
      return { status: res.status, text, json: safeJson(text) };
    },
    /* Sends signal (if still running) and waits for the exit. */
    async stop(signal = 'SIGTERM', { timeoutMs = 60000 } = {}) {
      for (const c of clients) c.close().catch(() => {});
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      const t = setTimeout(() => proc.kill('SIGKILL'), timeoutMs);
      const r = await exited;
      clearTimeout(t);
      return r;
    },
    /* Chromium processes still running for this data dir. */
    chromiums: () => chromiumPids(dir),
    /* Test hygiene after a kill -9: the browsers of that run are killed
     * here, by the test (glassbox's own orphan cleanup is another matter). */
    killLeftovers() {
      for (const pid of chromiumPids(dir)) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    },
    removeDataDir() {
      if (process.env.GLASSBOX_KEEP_DATA === '1') return;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return svc;
}

function safeJson(text) {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

export const INIT = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
};

/* Logs console credential id of svc in over plain HTTP (POST
 * /console/login); returns {cookie: the cookie header value, csrf: the
 * sessions page's CSRF token}. */
export async function consoleLogin(svc, id) {
  const r = await fetch(`${svc.adminUrl}/console/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: svc.consoleTokens[id] }),
    redirect: 'manual',
  });
  assert.equal(r.status, 303);
  const cookie = r.headers.get('set-cookie').split(';')[0];
  const page = await (await fetch(`${svc.adminUrl}/console/sessions`, { headers: { cookie } })).text();
  return { cookie, csrf: /data-csrf="([0-9a-f]{64})"/.exec(page)[1] };
}
