/*
 * Isolation "context", glassbox serve, real Chromium and the official MCP
 * SDK client: a tenant's shared browser stays limits.shared_browser_linger_s
 * after its last session, so the tenant's next session joins the same
 * Chromium; it ends once the linger has passed unused, and a stop ends a
 * lingering one too (no Chromium left).
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, startFixtureServer, ok, sc, dump, pollUntil, REPO_ROOT } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';

const LOOPBACK = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
const CONTEXT = { ...LOOPBACK, isolation: 'context' };

let fixture;
const services = [];

/* The browser (main) processes of svc (no --type=). */
function browserMains(svc) {
  return svc.chromiums().filter((pid) => {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      return /^chrom(e|ium)$/.test(path.basename(args[0])) && !args.some((a) => a.startsWith('--type='));
    } catch {
      return false;
    }
  });
}

/* The renderer processes of svc. */
function renderers(svc) {
  return svc.chromiums().filter((pid) => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').includes('--type=renderer');
    } catch {
      return false;
    }
  });
}

async function serve(lingerS) {
  fixture = fixture || (await startFixtureServer());
  const svc = await startServe({ tenants: { alpha: { policy: CONTEXT, max_sessions: 4 } }, limits: { idle_ttl_s: 120, shared_browser_linger_s: lingerS } });
  services.push(svc);
  return svc;
}

/* One session of alpha: navigates, then ends (DELETE). Returns the browser
 * its first navigate reported. */
async function oneSession(svc) {
  const s = await svc.connect('alpha');
  const r = await ok(s.client, 'browser_navigate', { url: fixture.url + '/form.html' });
  await s.transport.terminateSession();
  await s.client.close();
  return sc(r).browser;
}

async function stopAll() {
  while (services.length) {
    const svc = services.pop();
    const r = await svc.stop('SIGTERM');
    assert.equal(r.code, 0, `glassbox serve exited with ${JSON.stringify(r)}:\n${svc.stderr().slice(-3000)}`);
    assert.deepEqual(svc.chromiums(), [], 'no Chromium may be left after the stop, lingering ones included');
    svc.removeDataDir();
  }
}

after(async () => {
  await stopAll();
  if (fixture) await fixture.close();
});

test('the next session of the tenant joins the browser its last session left, and a stop ends it', async () => {
  const svc = await serve(600);
  assert.equal(await oneSession(svc), 'shared');
  const [first] = browserMains(svc);
  assert.ok(first, 'the shared browser runs');
  // the session has closed once its context's renderer is gone; the
  // browser stays for the next one
  const closed = await pollUntil(() => renderers(svc).length === 0, { deadlineMs: 60000 });
  assert.ok(closed, `the closed session's renderer still runs: ${renderers(svc)}`);
  assert.deepEqual(browserMains(svc), [first], 'the browser lingers after its last session');
  assert.equal(await oneSession(svc), 'shared');
  assert.deepEqual(browserMains(svc), [first], 'the next session joined the same Chromium');
  await stopAll(); // asserts that the lingering browser went with the service
});

test('a shared browser left unused ends once its linger has passed', async () => {
  const svc = await serve(1);
  assert.equal(await oneSession(svc), 'shared');
  const gone = await pollUntil(() => browserMains(svc).length === 0, { deadlineMs: 60000 });
  assert.ok(gone, `the browser still runs long after its linger: ${browserMains(svc)}`);
  assert.equal(await oneSession(svc), 'shared', 'the next session starts a new shared browser');
});

test('shared_browser_linger_s out of range is a config error that names it', async () => {
  await assert.rejects(() => startServe({ tenants: { alpha: { policy: CONTEXT } }, limits: { shared_browser_linger_s: -1 } }), /shared_browser_linger_s/);
});
