/*
 * glassbox serve: MCP over Streamable HTTP for several tenants, driven by
 * the official SDK's StreamableHTTPClientTransport and by plain fetch for
 * the HTTP-level answers (401, 403, 404, 405, 406, 413, 429, 400).
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, startFixtureServer, ok, callTool, resourceLinksOf, textOf, sc, pollUntil, navigate, snapshot, findRef,
  ElicitRequestSchema, REPO_ROOT,
} from '../e2e/lib.mjs';
import { startServe, INIT } from './serve_helpers.mjs';
import { signIn, account } from './profile_helpers.mjs';

let fixture;
let svc;

before(async () => {
  fixture = await startFixtureServer();
  svc = await startServe({
    tenants: {
      alpha: {},
      beta: { max_sessions: 2, tool_calls_per_session: 3 },
      gamma: { policy: JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'elicitation.json'), 'utf8')) },
    },
    limits: { idle_ttl_s: 60, max_body_bytes: 65536 },
    admin: true,
  });
});

after(async () => {
  if (svc) {
    const r = await svc.stop('SIGTERM');
    assert.equal(r.code, 0, `glassbox serve exited with ${JSON.stringify(r)}:\n${svc.stderr().slice(-3000)}`);
    assert.deepEqual(svc.chromiums(), [], 'no Chromium may be left after the stop');
    svc.removeDataDir();
  }
  if (fixture) await fixture.close();
});

test('two tenants work at once, and neither can reach the other\'s session or evidence', async () => {
  const [a, b] = await Promise.all([svc.connect('alpha'), svc.connect('beta')]);
  assert.match(a.sessionId, /^[0-9a-f]{64}$/, 'the session id is 256 random bits in hex');
  assert.notEqual(a.sessionId, b.sessionId);
  const [ra, rb] = await Promise.all([
    ok(a.client, 'browser_navigate', { url: fixture.url + '/form.html' }),
    ok(b.client, 'browser_navigate', { url: fixture.url + '/second.html' }),
  ]);
  assert.equal(sc(ra).ok, true);
  assert.equal(sc(rb).ok, true);
  const titleA = sc(await ok(a.client, 'browser_evaluate', { function: '() => document.title' })).result;
  const titleB = sc(await ok(b.client, 'browser_evaluate', { function: '() => document.title' })).result;
  assert.equal(titleA, 'Account settings');
  assert.notEqual(titleB, titleA, 'each tenant has its own browser');

  // alpha's evidence: readable by alpha, not found for beta
  const link = resourceLinksOf(ra)[0];
  assert.ok(link, `navigate links evidence: ${textOf(ra)}`);
  const own = await a.client.readResource({ uri: link.uri });
  assert.equal(own.contents[0].mimeType, 'image/png');
  await assert.rejects(b.client.readResource({ uri: link.uri }), (err) => {
    assert.equal(err.code, -32002, String(err));
    return true;
  });

  // beta with alpha's session id: 404, exactly like an unknown id
  const cross = await svc.rawPost('beta', { jsonrpc: '2.0', id: 9, method: 'ping' }, { 'mcp-session-id': a.sessionId });
  const unknown = await svc.rawPost('beta', { jsonrpc: '2.0', id: 9, method: 'ping' }, { 'mcp-session-id': 'f'.repeat(64) });
  assert.equal(cross.status, 404);
  assert.equal(unknown.status, 404);
  assert.equal(cross.text, unknown.text, 'another tenant\'s session looks exactly like an unknown one');
  // nor can beta end it
  const del = await fetch(svc.url, { method: 'DELETE', headers: { authorization: `Bearer ${svc.tokens.beta}`, 'mcp-session-id': a.sessionId } });
  assert.equal(del.status, 404);
  await a.client.ping(); // alpha's session is intact

  await a.transport.terminateSession();
  await b.transport.terminateSession();
  await a.client.close();
  await b.client.close();
});

test('no token, a wrong token or a token in the wrong place: 401 with WWW-Authenticate', async () => {
  for (const headers of [{}, { authorization: 'Bearer not-the-token' }, { authorization: `Basic ${svc.tokens.alpha}` }]) {
    const r = await svc.rawPost(null, INIT, headers);
    assert.equal(r.status, 401, JSON.stringify(headers));
    assert.match(r.headers.get('www-authenticate') || '', /^Bearer /);
    assert.match(r.json.error.message, /Authorization: Bearer/);
  }
  const inQuery = await fetch(`${svc.url}?access_token=${svc.tokens.alpha}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify(INIT),
  });
  assert.equal(inQuery.status, 401, 'a token is taken from the Authorization header only');
});

test('a foreign Origin or Host is refused with 403 (DNS rebinding)', async () => {
  const r = await svc.rawPost('alpha', INIT, { origin: 'http://evil.example' });
  assert.equal(r.status, 403);
  const local = await svc.rawPost('alpha', { jsonrpc: '2.0', id: 2, method: 'ping' }, { origin: 'http://localhost:3000' });
  assert.notEqual(local.status, 403, 'a loopback origin is fine');
});

test('protocol version header, unknown session, GET, Accept and body size', async () => {
  const { client, transport, sessionId } = await svc.connect('alpha');
  const s = { 'mcp-session-id': sessionId };
  const bad = await svc.rawPost('alpha', { jsonrpc: '2.0', id: 3, method: 'ping' }, { ...s, 'mcp-protocol-version': '2099-01-01' });
  assert.equal(bad.status, 400);
  assert.match(bad.json.error.message, /MCP-Protocol-Version/);
  const good = await svc.rawPost('alpha', { jsonrpc: '2.0', id: 4, method: 'ping' }, { ...s, 'mcp-protocol-version': '2025-11-25' });
  assert.equal(good.status, 200);
  assert.deepEqual(good.json, { jsonrpc: '2.0', id: 4, result: {} });

  const noSession = await svc.rawPost('alpha', { jsonrpc: '2.0', id: 5, method: 'ping' });
  assert.equal(noSession.status, 400);
  const notify = await svc.rawPost('alpha', { jsonrpc: '2.0', method: 'notifications/initialized' }, s);
  assert.equal(notify.status, 202);

  const get = await fetch(svc.url, { headers: { authorization: `Bearer ${svc.tokens.alpha}`, accept: 'text/event-stream', ...s } });
  assert.equal(get.status, 405);
  const accept = await svc.rawPost('alpha', { jsonrpc: '2.0', id: 6, method: 'ping' }, { ...s, accept: 'text/html' });
  assert.equal(accept.status, 406);

  const big = await svc.rawPost('alpha', { jsonrpc: '2.0', id: 7, method: 'ping', params: { pad: 'x'.repeat(70000) } }, s);
  assert.equal(big.status, 413);
  await client.ping(); // the service and the session carry on

  // DELETE ends the session; afterwards its id is unknown
  await transport.terminateSession();
  const after = await svc.rawPost('alpha', { jsonrpc: '2.0', id: 8, method: 'ping' }, s);
  assert.equal(after.status, 404);
  await client.close();
});

test('over the tenant\'s session limit: 429 with Retry-After; a closed session frees its place', async () => {
  const first = await svc.connect('beta');
  const second = await svc.connect('beta');
  const third = await svc.rawPost('beta', INIT);
  assert.equal(third.status, 429);
  assert.ok(Number(third.headers.get('retry-after')) > 0);
  assert.match(third.json.error.message, /too many sessions/);
  // another tenant is not affected
  const other = await svc.connect('alpha');
  await other.transport.terminateSession();
  await other.client.close();

  await first.transport.terminateSession();
  await first.client.close();
  const again = await pollUntil(async () => {
    const r = await svc.rawPost('beta', INIT);
    return r.status === 200 ? r : null;
  }, { deadlineMs: 20000, intervalMs: 250 });
  assert.ok(again, 'a new session starts once the closed one is gone');
  await fetch(svc.url, { method: 'DELETE', headers: { authorization: `Bearer ${svc.tokens.beta}`, 'mcp-session-id': again.headers.get('mcp-session-id') } });
  await second.transport.terminateSession();
  await second.client.close();
});

test('the tool call budget of a session: a clear error once used up', async () => {
  const { client, transport } = await svc.connect('beta');
  for (let i = 0; i < 3; i++) await ok(client, 'browser_evaluate', { function: '() => 1' });
  await assert.rejects(callTool(client, 'browser_evaluate', { function: '() => 1' }), (err) => {
    assert.match(String(err.message), /budget exhausted/);
    return true;
  });
  await client.ping(); // other requests are still served
  await transport.terminateSession();
  await client.close();
});

test('progress, elicitation and cancellation travel on the request\'s SSE stream', async () => {
  const asked = [];
  const { client, transport } = await svc.connect('gamma', {
    capabilities: { elicitation: {} },
    setupClient: (c) => c.setRequestHandler(ElicitRequestSchema, async (req) => {
      asked.push(req.params);
      return { action: 'accept', content: { approve: true } };
    }),
  });
  const seen = [];
  const r = await callTool(client, 'browser_navigate', { url: fixture.url + '/elicitation.html' }, { onprogress: (p) => seen.push(p) });
  assert.ok(!r.isError, textOf(r));
  assert.ok(seen.length >= 1, 'progress notifications arrive before the result');

  fixture.reset();
  const ref = findRef(await snapshot(client), 'button', 'Delete all orders');
  const click = await callTool(client, 'browser_click', { target: ref });
  assert.ok(!click.isError, textOf(click));
  assert.equal(asked.length, 1, 'the person at the client was asked once, over HTTP');
  assert.match(asked[0].message, /Delete all orders/);
  assert.equal(sc(click).approval?.by, 'mcp-elicitation:serve-test-gamma');
  assert.ok(await pollUntil(() => (fixture.hits().requests['POST /api/save'] || 0) >= 1), 'the approved click ran');

  // a cancelled call ends, and the session serves the next one at once
  const ac = new AbortController();
  const pending = callTool(client, 'browser_wait_for', { text: 'never there', time: 30 }, { signal: ac.signal });
  await new Promise((res) => setTimeout(res, 500));
  ac.abort('changed my mind');
  await assert.rejects(pending);
  const t = sc(await ok(client, 'browser_evaluate', { function: '() => 2 + 2' }, { timeout: 15000 })).result;
  assert.equal(t, 4);
  await transport.terminateSession();
  await client.close();
});

test('admin: sessions listed and killed, approvals, metrics; its own token', async () => {
  const { client, sessionId } = await svc.connect('alpha');
  const health = await svc.admin('GET', '/healthz', { token: null });
  assert.equal(health.status, 200);
  const status = JSON.parse(health.text);
  assert.equal(status.status, 'ok');
  assert.equal(status.egress_layers.proxy, true, health.text);
  assert.equal(typeof status.egress_layers.netns, 'boolean', health.text);
  assert.deepEqual(status.warm_pool, { size: 0, ready: 0 });
  // Chromium's sandbox: on here (as root, each browser runs as a user of its own), and why
  assert.equal(status.browser_sandbox.on, true, health.text);
  assert.ok(status.browser_sandbox.why.length > 0, health.text);
  assert.equal((await svc.admin('GET', '/readyz', { token: null })).status, 200);
  assert.equal((await svc.admin('GET', '/sessions', { token: null })).status, 401);
  assert.equal((await svc.admin('GET', '/sessions', { token: svc.tokens.alpha })).status, 401, 'a tenant token is not the admin token');
  const list = await svc.admin('GET', '/sessions');
  const mine = list.json.sessions.find((x) => x.id === sessionId);
  assert.ok(mine, JSON.stringify(list.json));
  assert.equal(mine.tenant, 'alpha');
  for (const k of ['state', 'created', 'last_activity', 'calls']) assert.ok(k in mine, k);
  const approvals = await svc.admin('GET', '/approvals');
  assert.ok(Array.isArray(approvals.json.approvals));

  const metrics = await svc.admin('GET', '/metrics');
  assert.equal(metrics.status, 200);
  for (const name of ['glassbox_sessions{state="idle"}', 'glassbox_tool_latency_seconds_bucket{tool="browser_navigate",le="+Inf"}',
    'glassbox_session_time_to_ready_seconds_count', 'glassbox_residual_processes 0', 'glassbox_http_requests_total{code="401"}',
    'glassbox_approvals_pending', 'glassbox_warm_pool_ready', 'glassbox_egress_blocked_total', 'glassbox_verification_failures_total'])
    assert.ok(metrics.text.includes(name), `metrics lack ${name}`);

  const kill = await svc.admin('DELETE', `/sessions/${sessionId}`);
  assert.equal(kill.status, 200);
  await assert.rejects(client.ping(), /404|not found/i);
  assert.equal((await svc.admin('DELETE', `/sessions/${sessionId}`)).status, 404);
  await client.close().catch(() => {});
});

test('a profile is sealed when its session is DELETEd, and not when an admin kills the session', async () => {
  const login = (client, user) => signIn(client, fixture.url, user);
  const signedInAs = async (client) => (await account(client, fixture.url)).text;
  /* a closing session still holds its profile while it seals it: retry as a client would */
  const open = async (client) => {
    let r;
    await pollUntil(async () => {
      r = await callTool(client, 'browser_session', { action: 'open', profile: 'desk' }, { timeout: 60000 });
      return sc(r)?.error?.code !== 'profile_busy';
    }, { deadlineMs: 60000 });
    assert.equal(r.isError, undefined, textOf(r));
    return r;
  };
  const first = await svc.connect('alpha');
  let r = await ok(first.client, 'browser_session', { action: 'open', profile: 'desk', create: true });
  assert.equal(sc(r).profile.version, 0);
  await login(first.client, 'alice');
  await first.transport.terminateSession();

  const second = await svc.connect('alpha');
  r = await open(second.client);
  assert.equal(sc(r).profile.version, 1, 'sealed when the client ended its session');
  assert.match(await signedInAs(second.client), /Signed in as alice/);
  await login(second.client, 'mallory');
  assert.equal((await svc.admin('DELETE', `/sessions/${second.sessionId}`)).status, 200);

  const third = await svc.connect('alpha');
  r = await open(third.client);
  assert.equal(sc(r).profile.version, 1, 'a killed session does not seal what it did');
  assert.match(await signedInAs(third.client), /Signed in as alice/);
  await ok(third.client, 'browser_session', { action: 'close', save: false });
  await third.transport.terminateSession();
});
