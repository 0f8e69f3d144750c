/*
 * replicas.test.mjs - three `glassbox serve` replicas behind HAProxy with
 * the shipped config (deploy/haproxy/haproxy.cfg), each with its own data
 * dir, one audit key, one PostgreSQL (a throwaway server: the shared
 * ledger, approvals, session registry and audit segment table) and a
 * real S3-API server on loopback for the trail (tests/e2e/s3_server.mjs). Two tenants run sessions through the proxy:
 * each session is served by the replica its id names, new ones spread;
 * an approval asked for on replica 3 and granted through replica 1's
 * admin path is spent on replica 3 exactly once;
 * a request sent to the wrong replica is refused naming the owner; a
 * draining replica says so on /readyz, keeps serving its sessions and
 * gets no new one; a replica killed with SIGKILL in the middle of a
 * click: its clients get a clear error, the others go on, the restarted
 * replica reaps the browsers left behind, and the click is `unknown` in
 * the shared ledger, whichever replica is asked; `audit verify --store`
 * passes over the merged trail of all three and names a deleted segment,
 * also the last one of a chain deleted with its head (the segment table
 * in PostgreSQL still says it was written).
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, Client, StreamableHTTPClientTransport, ok, callTool, sc, dump, pollUntil, newDataDir, chromiumPids, pidAlive as alive } from '../e2e/lib.mjs';
import { startHaproxy, freePort } from '../e2e/haproxy.mjs';
import { replicaEnv, shareSecret } from './replica_helpers.mjs';
import { GATES_POLICY, buttonRef, seen, approvals, decide, assertApprovalRequired, assertApprovalRefused } from './gates_helpers.mjs';

// acme runs under the shipped gates policy (deleting orders needs a person's approval), with
// approvals that outlive a slow machine; beta under the loopback test policy
const ACME_POLICY = JSON.parse(fs.readFileSync(GATES_POLICY, 'utf8'));
ACME_POLICY.risk = { ...ACME_POLICY.risk, approval_ttl_seconds: 600 };
const DELETE = 'POST /orders/delete';

const env = replicaEnv();
const replicas = env.replicas;
let fixture;
let pg;
let s3;
let work;
let lb;
const ports = {};
const clients = [];

/* Ends a session (DELETE /mcp) and closes its client. */
async function end(c) {
  await c.transport.terminateSession().catch(() => {});
  await c.client.close().catch(() => {});
}
let tokens;
let adminToken;

/* Starts (or restarts) replica name on its fixed ports and data dir. */
async function startReplica(name) {
  const first = !tokens;
  const svc = await env.startReplica(name, {
    tenants: { acme: { policy: ACME_POLICY }, beta: {} },
    admin: true,
    dataDir: ports[name].dataDir,
    port: ports[name].port,
    adminPort: ports[name].adminPort,
    tokens,
    adminToken,
    replica: { drain_s: 120, audit_ship_interval_ms: 300 },
  });
  if (first) {
    tokens = svc.tokens;
    adminToken = svc.adminToken;
  }
  return svc;
}

/* An SDK client of tenant, connected through url (the proxy by default). */
async function connect(tenant, url = lb.url) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${tokens[tenant]}` } } });
  const client = new Client({ name: `replicas-${tenant}`, version: '1.0.0' });
  await client.connect(transport);
  const c = { client, transport };
  clients.push(c);
  return { client, transport, sessionId: transport.sessionId, replica: transport.sessionId.split('.')[0] };
}

/* A raw JSON-RPC POST to url with tenant's token and headers. */
async function post(url, tenant, body, headers = {}) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${tokens[tenant]}`, 'mcp-protocol-version': '2025-11-25', ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, text, json };
}

const run = (args) => env.run(args);

before(async () => {
  await env.start({ postgres: true, bucket: 'replicas' });
  ({ fixture, pg, s3, work } = env);
  for (const name of ['r1', 'r2', 'r3']) ports[name] = { port: await freePort(), adminPort: await freePort(), dataDir: newDataDir(`glassbox-replica-${name}-`) };
  await startReplica('r1');
  // one audit key for all replicas, as one Kubernetes Secret would give them
  for (const name of ['r2', 'r3']) shareSecret(ports.r1.dataDir, ports[name].dataDir);
  await startReplica('r2');
  await startReplica('r3');
  lb = await startHaproxy(ports);
});

after(async () => {
  for (const c of clients) await end(c);
  if (lb) await lb.stop();
  await env.stop();
});

const sessions = [];

test('two tenants run sessions through the proxy: each on the replica its id names, new ones spread', async () => {
  for (let i = 0; i < 6; i++) sessions.push({ tenant: i % 2 ? 'beta' : 'acme', ...(await connect(i % 2 ? 'beta' : 'acme')) });
  for (const s of sessions) {
    assert.match(s.sessionId, /^r[123]\.[0-9a-f]{64}$/);
    await ok(s.client, 'browser_navigate', { url: `${fixture.url}/form.html?${s.tenant}` });
  }
  const used = new Set(sessions.map((s) => s.replica));
  assert.ok(used.size >= 2, `new sessions went to more than one replica: ${[...used]}`);
  // each replica lists exactly the sessions whose ids name it
  for (const name of ['r1', 'r2', 'r3']) {
    const r = await replicas[name].admin('GET', '/sessions');
    assert.equal(r.status, 200);
    const ids = r.json.sessions.map((x) => x.id).sort();
    assert.deepEqual(ids, sessions.filter((s) => s.replica === name).map((s) => s.sessionId).sort());
  }
});

test('a request for a session sent to another replica is refused naming the owner, never served there', async () => {
  const s = sessions[0];
  const other = ['r1', 'r2', 'r3'].find((n) => n !== s.replica);
  const before = fixture.hits().paths['/form.html'] || 0;
  const r = await post(replicas[other].url, s.tenant, { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'browser_navigate', arguments: { url: `${fixture.url}/form.html` } } }, { 'mcp-session-id': s.sessionId });
  assert.equal(r.status, 421, r.text);
  assert.match(r.json.error.message, new RegExp(`belongs to replica ${s.replica}, not to this one \\(${other}\\): send its requests through the router`));
  assert.equal(fixture.hits().paths['/form.html'] || 0, before, 'no browser loaded the page');
  // through the proxy the same request reaches the owner
  const via = await post(lb.url, s.tenant, { jsonrpc: '2.0', id: 8, method: 'tools/call', params: { name: 'browser_snapshot', arguments: {} } }, { 'mcp-session-id': s.sessionId });
  assert.equal(via.status, 200, via.text);
  // an id naming a replica that does not hold it: not found, from that replica
  const fake = `${other}.${'0'.repeat(64)}`;
  const nf = await post(lb.url, s.tenant, { jsonrpc: '2.0', id: 9, method: 'tools/list' }, { 'mcp-session-id': fake });
  assert.equal(nf.status, 404, nf.text);
});

test('an approval asked for on replica 3 and granted through replica 1 is spent on replica 3 exactly once', async () => {
  // a session of acme on r3, through the proxy (new sessions go round the ready replicas)
  let agent;
  for (let i = 0; i < 9 && !agent; i++) {
    const c = await connect('acme');
    if (c.replica === 'r3') agent = c;
    else await end(c);
  }
  assert.ok(agent, 'the proxy gave acme a session on r3');
  await ok(agent.client, 'browser_navigate', { url: fixture.url + '/gates/orders.html' });
  fixture.reset();
  const ref = await buttonRef(agent.client, 'Delete all orders');
  const g = assertApprovalRequired(await callTool(agent.client, 'browser_click', { target: ref }), 'Delete all orders on r3');
  assert.equal(seen(fixture, DELETE), 0);
  // replica 1's admin path (its admin socket, there while a session of its own runs)
  const mine = sessions.find((s) => s.replica === 'r1') || (await connect('acme', replicas.r1.url));
  await ok(mine.client, 'browser_snapshot', {});
  const socket = path.join(ports.r1.dataDir, 'run', 'admin.sock');
  assert.ok(await pollUntil(() => fs.existsSync(socket), { deadlineMs: 30000 }), 'replica 1 has an admin socket');
  const list = await approvals(ports.r1.dataDir, ['list']);
  assert.ok(list.stdout.includes(g.approval_id), `replica 1 lists r3's request: ${list.stdout}${list.stderr}`);
  await decide(ports.r1.dataDir, 'approve', g.approval_id, ['--by', 'alice']);
  // spent on r3 through the proxy, once
  const r = await ok(agent.client, 'browser_click', { target: ref, approval: g.approval_id });
  assert.equal(sc(r).approval?.by, 'alice', dump(r));
  assert.equal(seen(fixture, DELETE), 1, JSON.stringify(fixture.hits()));
  assertApprovalRefused(await callTool(agent.client, 'browser_click', { target: ref, approval: g.approval_id }), 'used', 'the second use');
  assert.equal(seen(fixture, DELETE), 1, 'still exactly one delete');
  const [[state]] = pg.query(`SELECT state FROM approvals WHERE id = '${g.approval_id}'`);
  assert.equal(state, 'used');
  await end(agent);
});

test('SIGKILL of a replica in the middle of a click: its clients get a clear error, the others go on, the restart reaps its browsers and the click is unknown', async () => {
  const victimName = sessions[0].replica;
  const victim = sessions.find((s) => s.replica === victimName);
  const others = sessions.filter((s) => s.replica !== victimName);
  assert.ok(others.length > 0);
  await ok(victim.client, 'browser_navigate', { url: `${fixture.url}/gates/slow.html` });
  const ref = await buttonRef(victim.client, 'Build report');
  const opId = `kill-${Date.now()}`;
  const before = seen(fixture, 'POST /api/click');
  const inFlight = callTool(victim.client, 'browser_click', { target: ref, operation_id: opId }).then(
    (r) => ({ result: r }),
    (e) => ({ error: e })
  );
  assert.ok(await pollUntil(() => seen(fixture, 'POST /api/click') > before, { deadlineMs: 60000, intervalMs: 20 }), 'the click reached the page');
  const oldBrowsers = chromiumPids(ports[victimName].dataDir);
  assert.ok(oldBrowsers.length > 0);
  replicas[victimName].proc.kill('SIGKILL');
  await replicas[victimName].exited;
  const outcome = await inFlight;
  const said = outcome.error ? String(outcome.error.message) : dump(outcome.result);
  assert.ok(outcome.error || outcome.result.isError, `the call in flight failed: ${said}`);
  // the next request of that session: the proxy's JSON-RPC error, naming why
  const next = await post(lb.url, victim.tenant, { jsonrpc: '2.0', id: 11, method: 'tools/list' }, { 'mcp-session-id': victim.sessionId });
  assert.ok([502, 503].includes(next.status), next.text);
  assert.equal(next.json.error.data.reason, 'replica_unavailable', next.text);
  assert.match(next.json.error.message, /replica/);
  // the other replicas' sessions go on
  for (const s of others) await ok(s.client, 'browser_snapshot', {});
  // restarted on its data dir: it reaps the browsers its killed run left
  const restarted = await startReplica(victimName);
  assert.ok(await pollUntil(() => oldBrowsers.every((pid) => !alive(pid)), { deadlineMs: 60000 }), `browsers of the killed run are gone: ${oldBrowsers.filter(alive)}`);
  // the click is unknown in the shared ledger: asked on another replica, it is not run again
  const elsewhere = await connect(victim.tenant, replicas[others[0].replica].url);
  await ok(elsewhere.client, 'browser_navigate', { url: `${fixture.url}/gates/slow.html` });
  const clicks0 = seen(fixture, 'POST /api/click');
  const there = await callTool(elsewhere.client, 'browser_click', { target: ref, operation_id: opId });
  assert.equal(sc(there).state, 'unknown', dump(there));
  assert.equal(seen(fixture, 'POST /api/click'), clicks0, 'not clicked on another replica');
  await end(elsewhere);
  // nor on the restarted one
  const c = await connect(victim.tenant, restarted.url);
  await ok(c.client, 'browser_navigate', { url: `${fixture.url}/gates/slow.html` });
  const clicks = seen(fixture, 'POST /api/click');
  // the same call (same arguments) as the one cut off
  const again = await callTool(c.client, 'browser_click', { target: ref, operation_id: opId });
  assert.equal(sc(again).state, 'unknown', dump(again));
  assert.equal(seen(fixture, 'POST /api/click'), clicks, 'not clicked again');
  await end(c);
});

test('a draining replica says so on /readyz, keeps serving its open sessions and gets no new ones', async () => {
  const name = 'r3';
  const svc = replicas[name];
  const mine = await connect('acme', svc.url);
  await ok(mine.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  svc.proc.kill('SIGTERM');
  assert.ok(await pollUntil(async () => (await fetch(`${svc.adminUrl}/readyz`)).status === 503, { deadlineMs: 30000 }));
  assert.equal(await (await fetch(`${svc.adminUrl}/readyz`)).text(), 'draining\n');
  // its open session is still served, through the proxy too
  await ok(mine.client, 'browser_snapshot', {});
  const via = await post(lb.url, 'acme', { jsonrpc: '2.0', id: 3, method: 'tools/list' }, { 'mcp-session-id': mine.sessionId });
  assert.equal(via.status, 200, via.text);
  // a new session sent to it directly is refused, saying what to do
  const direct = await post(svc.url, 'acme', { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
  assert.equal(direct.status, 503, direct.text);
  assert.match(direct.json.error.message, /draining and takes no new sessions/);
  // once the proxy saw /readyz fail, new sessions go elsewhere
  await new Promise((r) => setTimeout(r, 3000));
  for (let i = 0; i < 3; i++) {
    const n = await connect('beta');
    assert.notEqual(n.replica, name);
    await end(n);
  }
  // the drain ends when its last session does (not at replica.drain_s)
  for (const s of sessions.filter((x) => x.replica === name)) await end(s);
  await end(mine);
  const exit = await svc.exited;
  assert.deepEqual(exit, { code: 0, signal: null }, svc.stderr().slice(-2000));
  assert.doesNotMatch(svc.stderr(), /drain period over/, 'it stopped when its sessions had ended');
  await startReplica(name);
});

test('audit verify --store passes over the merged trail of the three replicas and names a deleted segment', async () => {
  for (const c of clients) await end(c);
  for (const name of ['r1', 'r2', 'r3']) {
    const r = await replicas[name].stop('SIGTERM');
    assert.deepEqual(r, { code: 0, signal: null }, replicas[name].stderr().slice(-2000));
  }
  const pub = path.join(work, 'audit.pub');
  fs.copyFileSync(path.join(ports.r1.dataDir, 'keys', 'audit.pub'), pub);
  const store = env.storeConfig;
  let r = await run(['audit', 'verify', '--store', store, '--pubkey', pub]);
  assert.equal(r.code, 0, r.out + r.err);
  const verified = r.out.split('\n').filter((l) => /chain verified/.test(l));
  const chains = new Set(verified.map((l) => l.match(/\(replica (r\d)\)/)[1]));
  assert.deepEqual([...chains].sort(), ['r1', 'r2', 'r3'], r.out);
  assert.ok(verified.some((l) => l.startsWith('beta ')) && verified.some((l) => l.startsWith('acme ')), r.out);
  // a segment deleted from the store is named
  const ls = await run(['objects', 'ls', 'tenants/acme/replicas/r1/audit/', '--config', store]);
  const segs = ls.out.split('\n').filter((l) => l.endsWith('.jsonl')).map((l) => l.split('\t')[1]).sort();
  assert.ok(segs.length >= 2, ls.out);
  const victim = s3.objectPath(segs[0]);
  for (const f of fs.readdirSync(path.dirname(victim))) if (f.startsWith(path.basename(segs[0]) + '._S3rver_')) fs.rmSync(path.join(path.dirname(victim), f));
  r = await run(['audit', 'verify', '--store', store, '--pubkey', pub, '--tenant', 'acme']);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /acme \(replica r1\): FAILED: records 1 to \d+ are in no segment: the segment before .* is missing/);
  // the last segment of a chain deleted with the head shipped beside it:
  // the segment table in PostgreSQL still says those records were written
  const lsb = await run(['objects', 'ls', 'tenants/beta/replicas/', '--config', store]);
  const chain = lsb.out.split('\n').filter((l) => l.endsWith('.jsonl')).map((l) => l.split('\t')[1]).sort()[0].split('/audit/')[0];
  const bsegs = lsb.out.split('\n').filter((l) => l.includes(chain + '/audit/') && l.endsWith('.jsonl')).map((l) => l.split('\t')[1]).sort();
  for (const key of [bsegs[bsegs.length - 1], `${chain}/audit/head.json`]) {
    const p = s3.objectPath(key);
    for (const f of fs.readdirSync(path.dirname(p))) if (f.startsWith(path.basename(key) + '._S3rver_')) fs.rmSync(path.join(path.dirname(p), f));
  }
  r = await run(['audit', 'verify', '--store', store, '--pubkey', pub, '--tenant', 'beta']);
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /FAILED: the segment table says this replica wrote (records up to \d+ and the object store holds them up to \d+: the segments after .* are missing|\d+ records, and the object store holds none)/);
  const rows = pg.query(`SELECT tenant, segment, records FROM audit_segments ORDER BY seq`);
  assert.ok(rows.some((row) => row[0] === 'acme' && row[1] === 'replicas/r1/audit' && Number(row[2]) > 0), JSON.stringify(rows));
});
