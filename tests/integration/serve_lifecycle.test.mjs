/*
 * glassbox serve over time: idle TTL (a running call keeps a session
 * alive), hard TTL, SIGTERM drills (a call in flight completes within the grace
 * period, or is ended at its deadline), a kill -9 drill (the next start
 * works), and a bounded load test on loopback: GLASSBOX_SERVE_LOAD=SxC
 * sessions x tool calls each (default 16x50), zero failed calls, zero
 * Chromium processes left.
 */
import { test, before, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { assert, startFixtureServer, ok, callTool, sc, textOf, pollUntil, glassboxBin, newDataDir, pidAlive as alive } from '../e2e/lib.mjs';
import { startServe, INIT, sha256hex } from './serve_helpers.mjs';

let fixture;

before(async () => {
  fixture = await startFixtureServer();
});

after(async () => {
  if (fixture) await fixture.close();
});

/* Stops svc with SIGTERM and checks the exit and the residue. */
async function stopClean(svc) {
  const r = await svc.stop('SIGTERM');
  assert.deepEqual(r, { code: 0, signal: null }, `exit of glassbox serve:\n${svc.stderr().slice(-3000)}`);
  assert.deepEqual(svc.chromiums(), [], 'no Chromium left after the stop');
  svc.removeDataDir();
}

test('a config or a tenant policy that is not valid stops the start, naming what is wrong', () => {
  const dir = newDataDir('glassbox-serve-bad-');
  try {
    const cases = [
      [{ tenants: { t: { token_sha256: 'abc' } } }, /tenants\.t\.token_sha256 must be the SHA-256/],
      [{ tenants: { t: { token_sha256: sha256hex('x'), policy: { egress: { allow_private: true } } } } },
        /the policy of tenant t is not valid: .*allow_private/],
      [{ listen: { port: 0 }, limits: { max_sessions: 0 }, tenants: { t: { token_sha256: sha256hex('x') } } }, /limits\.max_sessions/],
    ];
    for (const [config, message] of cases) {
      const file = path.join(dir, 'bad.json');
      fs.writeFileSync(file, JSON.stringify(config));
      const r = spawnSync(glassboxBin(), ['serve', '--config', file], { env: { ...process.env, GLASSBOX_DATA_DIR: dir }, encoding: 'utf8', timeout: 30000 });
      assert.equal(r.status, 2, r.stderr);
      assert.match(r.stderr, message);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('an idle session expires (404 afterwards, its browser closed); a running call keeps it alive', async () => {
  const svc = await startServe({ tenants: { t: {} }, limits: { idle_ttl_s: 2 }, admin: true });
  try {
    const { client, sessionId } = await svc.connect('t');
    // a 4 s call outlives the 2 s idle TTL: the session stays
    const r = await callTool(client, 'browser_wait_for', { time: 4 }, { timeout: 30000 });
    assert.ok(!r.isError, textOf(r));
    await client.ping();
    // watched through the admin listener: a request to the session would keep it alive
    const gone = await pollUntil(async () => {
      const list = await svc.admin('GET', '/sessions');
      return !list.json.sessions.some((x) => x.id === sessionId);
    }, { deadlineMs: 15000, intervalMs: 250 });
    assert.ok(gone, 'the idle session ends');
    const p = await svc.rawPost('t', { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': sessionId });
    assert.equal(p.status, 404, 'an expired session is not found');
    assert.ok(await pollUntil(() => svc.chromiums().length === 0, { deadlineMs: 15000 }), 'its browser is closed');
    const m = await svc.admin('GET', '/metrics');
    assert.match(m.text, /glassbox_sessions_closed_total\{reason="idle_ttl"\} 1/);
    await client.close().catch(() => {});
  } finally {
    await stopClean(svc);
  }
});

test('the hard TTL ends a session however active it is', async () => {
  const svc = await startServe({ tenants: { t: {} }, limits: { hard_ttl_s: 3, idle_ttl_s: 600 }, prelaunch: false });
  try {
    const { client, sessionId } = await svc.connect('t');
    const t0 = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - t0 < 15000) {
      const p = await svc.rawPost('t', { jsonrpc: '2.0', id: 1, method: 'ping' }, { 'mcp-session-id': sessionId });
      status = p.status;
      await new Promise((res) => setTimeout(res, 200));
    }
    assert.equal(status, 404, 'the busy session ended at its hard TTL');
    assert.ok(Date.now() - t0 >= 2500, 'not before its time');
    await client.close().catch(() => {});
  } finally {
    await stopClean(svc);
  }
});

test('SIGTERM: a call in flight completes, then every session closes and the process exits 0', async () => {
  const svc = await startServe({ tenants: { t: {} }, limits: { shutdown_grace_s: 20 } });
  const { client } = await svc.connect('t');
  await ok(client, 'browser_navigate', { url: fixture.url + '/form.html' });
  const pending = callTool(client, 'browser_wait_for', { time: 3 }, { timeout: 30000 });
  await new Promise((res) => setTimeout(res, 700));
  svc.proc.kill('SIGTERM');
  // stopping: new sessions are refused while the call finishes
  const refused = await svc.rawPost('t', INIT);
  assert.equal(refused.status, 503);
  const r = await pending;
  assert.ok(!r.isError, `the call in flight completed: ${textOf(r)}`);
  await stopClean(svc);
});

test('SIGTERM with a call longer than the grace period: the call is ended with an error, exit 0', async () => {
  const svc = await startServe({ tenants: { t: {} }, limits: { shutdown_grace_s: 1 } });
  const { client } = await svc.connect('t');
  await ok(client, 'browser_navigate', { url: fixture.url + '/form.html' });
  const pending = callTool(client, 'browser_wait_for', { time: 25 }, { timeout: 60000 });
  await new Promise((res) => setTimeout(res, 700));
  const t0 = Date.now();
  svc.proc.kill('SIGTERM');
  await assert.rejects(pending, (err) => {
    assert.match(String(err.message), /closed by the server|outcome is unknown/, `cause: ${err.cause?.stack || err.cause}\nlog:\n${svc.stderr().slice(-4000)}`);
    return true;
  });
  await stopClean(svc);
  assert.ok(Date.now() - t0 < 20000, 'the stop did not wait for the 25 s call');
});

test('kill -9 drill: the next start ends the browsers the killed run left, and works', async () => {
  const first = await startServe({ tenants: { t: {} } });
  const { client } = await first.connect('t');
  await ok(client, 'browser_navigate', { url: fixture.url + '/form.html' });
  const r = await first.stop('SIGKILL');
  assert.equal(r.signal, 'SIGKILL');
  const orphans = first.chromiums();
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.ok(orphans.length > 0 && orphans.some(alive), 'a killed glassbox leaves its browser behind');

  const second = await startServe({ tenants: { t: {} }, dataDir: first.dataDir });
  const gone = await pollUntil(() => orphans.every((pid) => !alive(pid)), { deadlineMs: 20000 });
  if (!gone) first.killLeftovers();
  assert.ok(gone, 'the next start ended the orphaned browser');
  const c2 = await second.connect('t');
  const title = sc(await ok(c2.client, 'browser_evaluate', { function: '() => document.title' })).result;
  assert.equal(typeof title, 'string');
  await ok(c2.client, 'browser_navigate', { url: fixture.url + '/form.html' });
  await stopClean(second);
});

test('load: many sessions and calls through serve on loopback, no failure, no residue', async () => {
  const [S, C] = (process.env.GLASSBOX_SERVE_LOAD || '16x50').split('x').map(Number);
  const svc = await startServe({
    tenants: { load: { max_sessions: S } },
    limits: { max_sessions: S, idle_ttl_s: 600 },
    prelaunch: true,
    admin: true,
  });
  const t0 = Date.now();
  let failed = 0;
  let calls = 0;
  try {
    const sessions = await Promise.all(Array.from({ length: S }, () => svc.connect('load')));
    await Promise.all(sessions.map(async ({ client }, i) => {
      await ok(client, 'browser_navigate', { url: `${fixture.url}/form.html?s=${i}` }, { timeout: 120000 });
      for (let k = 0; k < C; k++) {
        const r = await callTool(client, 'browser_snapshot', {}, { timeout: 120000 });
        calls++;
        if (r.isError) failed++;
      }
    }));
    const elapsed = (Date.now() - t0) / 1000;
    process.stderr.write(`serve load: ${S} sessions x ${C} calls = ${calls} calls in ${elapsed.toFixed(1)} s (${(calls / elapsed).toFixed(1)} calls/s), ${failed} failed\n`);
    assert.equal(failed, 0);
    assert.equal(calls, S * C);
    const m = await svc.admin('GET', '/metrics');
    assert.match(m.text, new RegExp(`glassbox_tool_latency_seconds_count\\{tool="browser_snapshot"\\} ${S * C}`));
    await Promise.all(sessions.map(({ transport }) => transport.terminateSession()));
    assert.ok(await pollUntil(() => svc.chromiums().length === 0, { deadlineMs: 60000 }), 'every browser closed after DELETE');
    const after = await svc.admin('GET', '/metrics');
    assert.match(after.text, /glassbox_residual_processes 0/);
  } finally {
    await stopClean(svc);
  }
});

test('a warm pool: a new session takes a pre-launched browser, and the pool refills', async () => {
  const svc = await startServe({ tenants: { t: {} }, warmPool: 1, admin: true });
  try {
    const ready = async () => JSON.parse((await svc.admin('GET', '/healthz', { token: null })).text).warm_pool;
    assert.equal((await ready()).size, 1);
    assert.ok(await pollUntil(async () => (await ready()).ready === 1, { deadlineMs: 60000 }), 'the pool filled');
    const { client, transport } = await svc.connect('t');
    const r = await ok(client, 'browser_navigate', { url: fixture.url + '/form.html' }, { timeout: 60000 });
    assert.equal(sc(r).browser, 'pooled', JSON.stringify(sc(r)));
    assert.ok(await pollUntil(async () => (await ready()).ready === 1, { deadlineMs: 60000 }), 'the pool refilled');
    await transport.terminateSession();
  } finally {
    await stopClean(svc);
  }
});
