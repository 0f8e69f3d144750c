/*
 * Fair limits of glassbox serve: a closing session counts against its own
 * tenant until its browser is gone, so one tenant's churn never takes
 * another's capacity; a session that never makes a tool call is ended
 * after limits.unused_ttl_s, and a 429 says what holds the capacity.
 */
import { test, after } from 'node:test';
import { assert, ok, sc, pollUntil } from '../e2e/lib.mjs';
import { startServe, INIT } from './serve_helpers.mjs';

const services = [];
after(async () => {
  for (const svc of services) {
    const r = await svc.stop('SIGTERM');
    assert.equal(r.code, 0, `glassbox serve exited with ${JSON.stringify(r)}:\n${svc.stderr().slice(-3000)}`);
    assert.deepEqual(svc.chromiums(), [], 'no Chromium may be left after the stop');
    svc.removeDataDir();
  }
});

/* DELETE /mcp of session id as tenant name. */
async function del(svc, name, id) {
  return fetch(svc.url, { method: 'DELETE', headers: { authorization: `Bearer ${svc.tokens[name]}`, 'mcp-session-id': id } });
}

test('tenant B churning initialize/DELETE from 3 clients for 20 s never takes tenant A\'s capacity', async () => {
  // each initialize starts a browser (prelaunch), so a DELETEd session
  // takes a while to close: that is where the capacity went before
  const svc = await startServe({
    tenants: { a: { max_sessions: 3 }, b: { max_sessions: 2 } },
    limits: { max_sessions: 5 },
  });
  services.push(svc);
  const until = Date.now() + 20000;
  const seen = { b200: 0, b429: 0, a200: 0, a429: [] };
  const churn = async () => {
    while (Date.now() < until) {
      const r = await svc.rawPost('b', INIT);
      if (r.status === 200) {
        seen.b200++;
        await del(svc, 'b', r.headers.get('mcp-session-id'));
      } else {
        assert.equal(r.status, 429, r.text);
        seen.b429++;
        assert.match(r.json.error.message, /your tenant \(\w+\) is at its limit/, 'B is held by its own limit, not the service\'s');
        await new Promise((res) => setTimeout(res, 50));
      }
    }
  };
  const tenantA = async () => {
    while (Date.now() < until) {
      const r = await svc.rawPost('a', INIT);
      if (r.status === 200) {
        seen.a200++;
        const id = r.headers.get('mcp-session-id');
        await del(svc, 'a', id);
        // A's own closing session counts against A: wait until it is gone
        await pollUntil(async () => {
          const list = await svc.rawPost('a', INIT);
          if (list.status === 200) {
            await del(svc, 'a', list.headers.get('mcp-session-id'));
            seen.a200++;
            return true;
          }
          if (list.status === 429) seen.a429.push(list.json.error.message);
          return false;
        }, { deadlineMs: 15000, intervalMs: 300 });
      } else {
        seen.a429.push(r.json?.error?.message || r.text);
      }
      await new Promise((res) => setTimeout(res, 500));
    }
  };
  await Promise.all([churn(), churn(), churn(), tenantA()]);
  assert.ok(seen.b200 >= 3, `B's churn ran (${JSON.stringify(seen)})`);
  assert.ok(seen.a200 >= 3, `A was served (${JSON.stringify(seen)})`);
  assert.deepEqual(seen.a429.filter((m) => !/your tenant \(\w+\) is at its limit/.test(m)), [],
    'A is never refused for the service\'s limit while B churns');
});

test('a session that never makes a tool call ends after unused_ttl_s; one in use does not; the 429 names what holds the capacity', async () => {
  const svc = await startServe({
    tenants: { a: { max_sessions: 2 } },
    limits: { unused_ttl_s: 5, idle_ttl_s: 600 },
    prelaunch: false,
    admin: true,
  });
  services.push(svc);
  const used = await svc.connect('a');
  const r = await ok(used.client, 'browser_evaluate', { function: '() => 1 + 1' });
  assert.equal(sc(r).result, 2);
  const unused = await svc.rawPost('a', INIT);
  assert.equal(unused.status, 200);

  const full = await svc.rawPost('a', INIT);
  assert.equal(full.status, 429);
  assert.match(full.json.error.message, /your tenant \(a\) is at its limit \(max_sessions 2\) \(2 open, 2 of them idle, 0 still closing; the first idle one expires in \d+ s\)/);
  assert.match(full.json.error.message, /DELETE \/mcp/);

  const gone = await pollUntil(async () => {
    const list = await svc.admin('GET', '/sessions');
    return list.json.sessions.length === 1 ? list.json.sessions : null;
  }, { deadlineMs: 15000, intervalMs: 250 });
  assert.ok(gone, 'the unused session was ended');
  assert.equal(gone[0].calls, 1, 'the session that made a call is kept');
  const ping = await svc.rawPost('a', { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': unused.headers.get('mcp-session-id') });
  assert.equal(ping.status, 404, 'the unused session is gone for its client too');
  const metrics = await svc.admin('GET', '/metrics');
  assert.match(metrics.text, /glassbox_sessions_closed_total\{[^}]*"unused_ttl"\} 1/);
  await used.transport.terminateSession();
  await used.client.close();
});
