/*
 * The concurrent serve test of `make test-tsan`: a ThreadSanitizer build of
 * `glassbox serve` (GLASSBOX_BIN=build-tsan/glassbox) driven by several MCP
 * sessions at once over the real HTTP socket, with tool calls against real
 * Chromium on the local fixture site, evidence read back, cancellations,
 * an admin's kill of a busy session, admin requests in parallel, and a
 * SIGTERM while a call is still running. It fails when ThreadSanitizer
 * reported anything.
 *
 * Not part of tests/run-node-tests.sh: against a build without TSan it
 * could not fail on a race, so it refuses to run there.
 *
 * TSAN_OPTIONS comes from the environment (the Makefile sets
 * halt_on_error=0, so that one run reports every race, exitcode=66 and the
 * suppressions file for third-party code); run alone, the file sets the
 * same.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import {
  assert, startFixtureServer, ok, callTool, sc, textOf, parseSnapshot, findRef, pollUntil, resourceLinksOf, REPO_ROOT,
} from '../e2e/lib.mjs';
import { startServe } from '../integration/serve_helpers.mjs';

if (!process.env.TSAN_OPTIONS)
  process.env.TSAN_OPTIONS = `halt_on_error=0 exitcode=66 suppressions=${REPO_ROOT}/tests/tsan/suppressions.txt`;

/* TSan makes glassbox several times slower; the bound is for a stuck call. */
const CALL = { timeout: 180000 };
const SESSIONS_PER_TENANT = 3;

let fixture;
let svc;

before(async () => {
  fixture = await startFixtureServer();
  svc = await startServe({
    tenants: { alpha: { max_sessions: SESSIONS_PER_TENANT + 1 }, beta: { max_sessions: SESSIONS_PER_TENANT + 1 } },
    limits: { idle_ttl_s: 300, shutdown_grace_s: 2 },
    admin: true,
    warmPool: 1,
  });
  // startServe reads the admin port once the MCP port is printed; a slow
  // (TSan) build may print the admin line after that
  if (!svc.adminUrl) {
    const port = await pollUntil(() => (svc.stderr().match(/admin on http:\/\/127\.0\.0\.1:(\d+)\//) || [])[1]);
    assert.ok(port, `no admin listener:\n${svc.stderr()}`);
    svc.adminUrl = `http://127.0.0.1:${port}`;
  }
});

after(async () => {
  if (svc && svc.proc.exitCode === null && svc.proc.signalCode === null) await svc.stop('SIGKILL');
  if (svc) svc.removeDataDir();
  if (fixture) await fixture.close();
});

/* The ThreadSanitizer reports in glassbox's stderr, whole, for the failure message. */
function tsanReports(stderr) {
  const out = [];
  const re = /={18}\nWARNING: ThreadSanitizer:[\s\S]*?\n={18}\n?/g;
  for (const m of stderr.matchAll(re)) out.push(m[0]);
  if (!out.length && /WARNING: ThreadSanitizer/.test(stderr)) out.push(stderr.slice(stderr.indexOf('WARNING: ThreadSanitizer')));
  return out;
}

/* One agent's session: initialize, navigate, its evidence read back,
 * snapshot, type, click, check the page, a cancelled wait, a protocol
 * request, DELETE. */
async function agent(tenant, i) {
  const c = await svc.connect(tenant);
  const nav = await ok(c.client, 'browser_navigate', { url: `${fixture.url}/form.html` }, CALL);
  assert.equal(sc(nav).ok, true, `${tenant}#${i}: navigate`);
  // the evidence, read back while the record keeper may still be writing it
  const link = resourceLinksOf(nav)[0];
  assert.ok(link, `${tenant}#${i}: navigate links its evidence: ${textOf(nav)}`);
  const png = await c.client.readResource({ uri: link.uri }, CALL);
  assert.equal(png.contents[0].mimeType, 'image/png');
  const snapText = textOf(await ok(c.client, 'browser_snapshot', {}, CALL));
  assert.ok(findRef({ text: snapText, nodes: parseSnapshot(snapText) }, 'textbox', 'Name'));
  const text = `${tenant} ${i}`;
  await ok(c.client, 'browser_type', { target: '#name', text }, CALL);
  await ok(c.client, 'browser_click', { target: '#save' }, CALL);
  const status = await ok(c.client, 'browser_evaluate', { function: "() => document.getElementById('status').textContent" }, CALL);
  assert.equal(sc(status).result, `Saved: ${text}`, `${tenant}#${i}: the form was saved in its own browser`);

  // a call cancelled while it waits (the cancel flag set by the front, read by the worker)
  const ac = new AbortController();
  const waiting = callTool(c.client, 'browser_wait_for', { text: 'never on this page', time: 30 }, { ...CALL, signal: ac.signal });
  await new Promise((r) => setTimeout(r, 300 + 200 * i));
  ac.abort('cancelled by the test');
  await assert.rejects(waiting);
  const { tools } = await c.client.listTools();
  assert.ok(tools.length > 0);
  await c.transport.terminateSession();
  await c.client.close();
}

/* Admin requests in a loop until stop() says so: the front thread reads
 * the sessions table and the metrics while the workers change them. */
async function adminLoop(stop) {
  let n = 0;
  while (!stop.done) {
    const [health, sessions, metrics] = await Promise.all([
      svc.admin('GET', '/healthz', { token: null }),
      svc.admin('GET', '/sessions'),
      svc.admin('GET', '/metrics'),
    ]);
    assert.equal(health.status, 200, health.text);
    assert.equal(sessions.status, 200, sessions.text);
    assert.equal(metrics.status, 200, metrics.text);
    n++;
    await new Promise((r) => setTimeout(r, 100));
  }
  return n;
}

test('concurrent sessions, cancellations, an admin kill and SIGTERM: ThreadSanitizer reports nothing', async () => {
  const maps = fs.readFileSync(`/proc/${svc.pid}/maps`, 'utf8');
  assert.match(maps, /libtsan/, `${svc.proc.spawnargs[0]} is not a ThreadSanitizer build: set GLASSBOX_BIN=build-tsan/glassbox (make test-tsan)`);

  const stop = { done: false };
  const admin = adminLoop(stop);
  const agents = [];
  for (let i = 0; i < SESSIONS_PER_TENANT; i++) agents.push(agent('alpha', i), agent('beta', i));

  // a session killed by the admin while its call runs
  const victim = await svc.connect('alpha');
  await ok(victim.client, 'browser_navigate', { url: `${fixture.url}/form.html` }, CALL);
  const killed = callTool(victim.client, 'browser_wait_for', { text: 'never on this page', time: 30 }, CALL).then(
    (r) => r,
    (err) => err,
  );
  await new Promise((r) => setTimeout(r, 500));
  const kill = await svc.admin('DELETE', `/sessions/${victim.sessionId}`);
  assert.equal(kill.status, 200, kill.text);

  const results = await Promise.allSettled(agents);
  stop.done = true;
  const adminRounds = await admin;
  assert.ok(adminRounds > 0);
  await killed; // answered with an error, or the stream ended: either way, no longer running
  for (const r of results) assert.equal(r.status, 'fulfilled', String(r.reason?.stack || r.reason));

  // SIGTERM while a call is still running: shutdown cancels it and closes the session
  const last = await svc.connect('beta');
  await ok(last.client, 'browser_navigate', { url: `${fixture.url}/form.html` }, CALL);
  const running = callTool(last.client, 'browser_wait_for', { text: 'never on this page', time: 30 }, CALL).catch((err) => err);
  await new Promise((r) => setTimeout(r, 500));
  const exit = await svc.stop('SIGTERM', { timeoutMs: 240000 });
  await running;

  const reports = tsanReports(svc.stderr());
  assert.equal(reports.length, 0, `ThreadSanitizer reported ${reports.length} race(s):\n${reports.join('\n').slice(0, 20000)}`);
  assert.deepEqual(exit, { code: 0, signal: null }, `glassbox serve exited with ${JSON.stringify(exit)}:\n${svc.stderr().slice(-4000)}`);
  assert.deepEqual(svc.chromiums(), [], 'no Chromium may be left after the stop');
});
