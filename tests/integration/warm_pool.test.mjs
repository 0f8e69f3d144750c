/*
 * warm_pool.test.mjs - a pooled session's first action, through glassbox
 * serve and the official SDK client, with real Chromium (docs/lifecycle.md,
 * "Warm pool"). Pooled browsers wait with their browser context, first
 * tab and Fetch interception readied ahead; what belongs to the session
 * is bound when it takes one. The first request of a pooled session is
 * policed exactly as a launched session's: with the tool layer off (so the
 * browser's own layers face it), a denied host is refused by Fetch, a name
 * the proxy resolves to a private address is refused by the session's own
 * proxy (its refusal is in the session's result, which the pool's
 * refuse-all proxy could not put there), and the allowed site loads (the
 * context's proxy has the tenant's allowlist); the denied server sees no
 * request and no connection. The cookies and storage a pooled session left
 * are never visible to the next one.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, REPO_ROOT, startFixtureServer, callTool, ok, sc, dump, pollUntil } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';

let allowed;
let denied;

before(async () => {
  allowed = await startFixtureServer();
  denied = await startFixtureServer();
});

after(async () => {
  if (allowed) await allowed.close();
  if (denied) await denied.close();
});

const shop = (p) => `http://shop.test:${allowed.port}${p}`;
const evil = (p) => `http://evil.test:${denied.port}${p}`;
const deniedHits = () => Object.values(denied.hits().paths).reduce((a, b) => a + b, 0);

/* The drill policy, the allowed site added, the tool layer off. */
function drillPolicy() {
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'egress-drill.json'), 'utf8'));
  policy.egress.allow.push(`shop.test:${allowed.port}`);
  policy.egress_layers = { tool: false };
  return policy;
}

/* glassbox serve with a warm pool of size, filled before it returns. */
async function serveWithPool(size, policy) {
  const svc = await startServe({ tenants: { a: { policy } }, warmPool: size, admin: true });
  const ready = async () => JSON.parse((await svc.admin('GET', '/healthz', { token: null })).text).warm_pool.ready;
  svc.poolReady = ready;
  if (size > 0) assert.ok(await pollUntil(async () => (await ready()) === size, { deadlineMs: 120000 }), 'the pool filled');
  return svc;
}

async function stopClean(svc) {
  await svc.stop('SIGTERM');
  assert.deepEqual(svc.chromiums(), [], 'no Chromium left after the stop');
  svc.removeDataDir();
}

/* A new session's first call, browser_navigate to url; then cheap calls
 * until a refusal for pathPart shows (a proxy's refusal may land in the
 * next result). Returns what a caller compares: the browser kind, whether
 * the navigate failed, and the refusals' layers and rules. */
async function firstNavigate(svc, url, pathPart) {
  const { client, transport } = await svc.connect('a');
  const blocked = [];
  const first = await callTool(client, 'browser_navigate', { url }, { timeout: 120000 });
  const browser = sc(first).browser;
  for (const b of sc(first).blocked || []) blocked.push(b);
  const mine = () => blocked.filter((b) => (b.url || '').includes(pathPart) || (b.host || '').startsWith(pathPart));
  const end = Date.now() + 10000;
  while (pathPart && mine().length === 0 && Date.now() < end) {
    const r = await callTool(client, 'browser_evaluate', { function: '() => 1' });
    for (const b of sc(r).blocked || []) blocked.push(b);
  }
  await transport.terminateSession();
  const found = mine();
  return {
    browser,
    failed: first.isError === true || sc(first).ok === false,
    layers: [...new Set(found.map((b) => b.layer))].sort(),
    rules: [...new Set(found.map((b) => b.rule))].sort(),
    title: sc(first).title,
    dump: dump(first),
  };
}

/* The three first navigates of a drill, each in a new session. */
async function drill(svc, refill) {
  const out = {};
  out.denied = await firstNavigate(svc, evil('/leak/first'), '/leak/first');
  await refill();
  out.private = await firstNavigate(svc, 'http://intranet.test/leak/private', 'intranet.test');
  await refill();
  out.allowed = await firstNavigate(svc, shop('/index.html'), '');
  return out;
}

test("a pooled session's first request is refused or allowed exactly as a launched session's", async () => {
  const policy = drillPolicy();
  const results = {};
  for (const [kind, size] of [['pooled', 1], ['launched', 0]]) {
    const svc = await serveWithPool(size, policy);
    try {
      const refill = size
        ? async () => assert.ok(await pollUntil(async () => (await svc.poolReady()) === size, { deadlineMs: 120000 }), 'the pool refilled')
        : async () => {};
      results[kind] = await drill(svc, refill);
    } finally {
      await stopClean(svc);
    }
  }
  for (const kind of ['pooled', 'launched']) {
    const r = results[kind];
    for (const step of ['denied', 'private', 'allowed']) assert.equal(r[step].browser, kind, `${kind} ${step}: ${r[step].dump}`);
    assert.deepEqual(r.denied.layers, ['fetch'], `${kind}: the denied host is refused by Fetch on the first request: ${r.denied.dump}`);
    assert.deepEqual(r.denied.rules, ['egress-deny'], r.denied.dump);
    assert.ok(r.denied.failed, `${kind}: the refused navigate is not ok: ${r.denied.dump}`);
    assert.deepEqual(r.private.layers, ['proxy'], `${kind}: the session's own proxy refuses the private address: ${r.private.dump}`);
    assert.equal(r.allowed.failed, false, `${kind}: the allowed site loads: ${r.allowed.dump}`);
    assert.deepEqual(r.allowed.layers, []);
  }
  const same = (r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, { failed: v.failed, layers: v.layers, rules: v.rules, title: v.title }]));
  assert.deepEqual(same(results.pooled), same(results.launched), 'pooled and launched first navigates end alike');
  assert.equal(deniedHits(), 0, JSON.stringify(denied.hits()));
  assert.equal(denied.connections(), 0, 'the denied server saw no connection at all');
});

test('the cookies and storage a pooled session left are not visible to the next pooled session', async () => {
  const policy = drillPolicy();
  policy.egress_layers = {};
  const svc = await serveWithPool(1, policy);
  try {
    const a = await svc.connect('a');
    const first = await ok(a.client, 'browser_navigate', { url: shop('/index.html') }, { timeout: 120000 });
    assert.equal(sc(first).browser, 'pooled', dump(first));
    const set = await ok(a.client, 'browser_evaluate', {
      function: `() => { document.cookie = 'gb_left=by-a; max-age=3600; path=/'; localStorage.setItem('gb_left', 'by-a');
        sessionStorage.setItem('gb_left', 'by-a'); return document.cookie + '|' + localStorage.getItem('gb_left'); }`,
    });
    assert.equal(sc(set).result, 'gb_left=by-a|by-a', dump(set));
    await a.transport.terminateSession();
    assert.ok(await pollUntil(async () => (await svc.poolReady()) === 1, { deadlineMs: 120000 }), 'the pool refilled');

    const b = await svc.connect('a');
    const nav = await ok(b.client, 'browser_navigate', { url: shop('/index.html') }, { timeout: 120000 });
    assert.equal(sc(nav).browser, 'pooled', dump(nav));
    const seen = await ok(b.client, 'browser_evaluate', {
      function: `() => JSON.stringify({ cookie: document.cookie, local: localStorage.length, session: sessionStorage.length })`,
    });
    assert.deepEqual(JSON.parse(sc(seen).result), { cookie: '', local: 0, session: 0 }, dump(seen));
    await b.transport.terminateSession();
  } finally {
    await stopClean(svc);
  }
});
