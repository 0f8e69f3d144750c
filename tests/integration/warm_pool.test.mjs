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

/* The drill policy, the allowed site added, with the given egress layers. */
function drillPolicy(layers) {
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'egress-drill.json'), 'utf8'));
  policy.egress.allow.push(`shop.test:${allowed.port}`, `127.0.0.1:${allowed.port}`);
  policy.egress_layers = layers;
  return policy;
}

/* Tenant f: the tool layer off (Fetch faces the first request); tenant p:
 * Fetch off too (the session's proxy alone). */
const DRILL_TENANTS = () => ({ f: { policy: drillPolicy({ tool: false }) }, p: { policy: drillPolicy({ tool: false, fetch: false }) } });

/* glassbox serve with a warm pool of size, filled before it returns. */
async function serveWithPool(size, tenants) {
  const svc = await startServe({ tenants, warmPool: size, admin: true });
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
async function firstNavigate(svc, tenant, url, pathPart) {
  const { client, transport } = await svc.connect(tenant);
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

/* The first navigates of a drill, each in a new session. */
async function drill(svc, refill) {
  const steps = [
    ['fetch_denied', 'f', evil('/leak/fetch'), '/leak/fetch'],
    ['proxy_denied', 'p', evil('/leak/proxy'), '/leak/proxy'],
    ['proxy_private', 'p', 'http://intranet.test/leak/private', 'intranet.test'],
    ['allowed', 'f', shop('/index.html'), ''],
  ];
  const out = {};
  for (const [name, tenant, url, pathPart] of steps) {
    await refill();
    out[name] = await firstNavigate(svc, tenant, url, pathPart);
  }
  return out;
}

test("a pooled session's first request is refused or allowed exactly as a launched session's", async () => {
  const results = {};
  for (const [kind, size] of [['pooled', 1], ['launched', 0]]) {
    const svc = await serveWithPool(size, DRILL_TENANTS());
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
    for (const [step, v] of Object.entries(r)) assert.equal(v.browser, kind, `${kind} ${step}: ${v.dump}`);
    assert.deepEqual(r.fetch_denied.layers, ['fetch'], `${kind}: the denied host is refused by Fetch on the first request: ${r.fetch_denied.dump}`);
    assert.deepEqual(r.fetch_denied.rules, ['egress-deny'], r.fetch_denied.dump);
    assert.ok(r.fetch_denied.failed, `${kind}: the refused navigate is not ok: ${r.fetch_denied.dump}`);
    assert.deepEqual(r.proxy_denied.layers, ['proxy'], `${kind}: the session's own proxy refuses the denied host: ${r.proxy_denied.dump}`);
    assert.deepEqual(r.proxy_denied.rules, ['egress-deny'], r.proxy_denied.dump);
    assert.deepEqual(r.proxy_private.layers, ['proxy'], `${kind}: the session's own proxy refuses the private address: ${r.proxy_private.dump}`);
    assert.equal(r.allowed.failed, false, `${kind}: the allowed site loads: ${r.allowed.dump}`);
    assert.deepEqual(r.allowed.layers, []);
  }
  // the title of Chromium's own error page (a refused request) is read
  // while that page may still be loading: it is not compared
  const same = (r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, { failed: v.failed, layers: v.layers, rules: v.rules, title: v.failed ? '(error page)' : v.title }]));
  assert.deepEqual(same(results.pooled), same(results.launched), 'pooled and launched first navigates end alike');
  assert.equal(deniedHits(), 0, JSON.stringify(denied.hits()));
  assert.equal(denied.connections(), 0, 'the denied server saw no connection at all');
});

test('the cookies and storage a pooled session left are not visible to the next pooled session', async () => {
  const svc = await serveWithPool(1, { a: { policy: drillPolicy({}) } });
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
