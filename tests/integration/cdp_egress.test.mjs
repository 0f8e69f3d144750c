/*
 * cdp_egress.test.mjs - the egress drill through a CDP client
 * (docs/cdp.md, "The egress boundary"): a Playwright client connected to
 * a session's endpoint tries every channel of the drill page, navigates,
 * opens popups, makes a context of its own and rewrites requests with its
 * own Fetch interception, all towards the denied server; the denied
 * server sees no request and no connection at all, while the allowed
 * twins load. Real Chromium, the session's egress proxy and Fetch layer.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { REPO_ROOT, startFixtureServer, pollUntil } from '../e2e/lib.mjs';
import { chromium } from '../e2e/cdp-libs.mjs';
import { startServe } from './serve_helpers.mjs';
import { newSession } from './cdp_helpers.mjs';
import { SUBRESOURCE_CHANNELS } from './egress-drills.mjs';

let allowed;
let denied;
let svc;
let browser;
const M = () => allowed.port;
const D = () => denied.port;
const shop = (p) => `http://shop.test:${M()}${p}`;
const evil = (p) => `http://evil.test:${D()}${p}`;

before(async () => {
  allowed = await startFixtureServer();
  denied = await startFixtureServer();
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'egress-drill.json'), 'utf8'));
  policy.egress.allow.push(`shop.test:${M()}`, `127.0.0.1:${M()}`);
  policy.cdp = 'allow';
  svc = await startServe({ tenants: { a: { policy } }, limits: { unused_ttl_s: 600 } });
  const s = await newSession(svc, 'a');
  browser = await chromium.connectOverCDP(s.url, { timeout: 120000 });
});

after(async () => {
  if (browser) await browser.close();
  await svc.stop();
  svc.removeDataDir();
  await allowed.close();
  await denied.close();
});

const deniedHits = () => Object.values(denied.hits().paths).reduce((a, b) => a + b, 0);

/* Runs the drill page with channels chs from origin; returns its results. */
async function probe(page, origin, chs, tag = '') {
  await page.goto(`${origin}/egress/probe.html?${new URLSearchParams({ chs: chs.join(','), base: evil(''), tag })}`);
  await page.waitForFunction(() => window.__drill && window.__drill.done, null, { timeout: 60000 });
  return page.evaluate(() => window.__drill.results);
}

test('every subresource channel of the drill page, through the CDP client: zero hits on the denied server', async () => {
  const page = browser.contexts()[0].pages()[0] || (await browser.contexts()[0].newPage());
  const res = await probe(page, shop(''), SUBRESOURCE_CHANNELS);
  for (const ch of SUBRESOURCE_CHANNELS) assert.ok(res[ch], `the page reported on ${ch}: ${JSON.stringify(res)}`);
  assert.equal(res.fetch.allowed, 'loaded', 'the allowed twin loads');
  await pollUntil(() => allowed.hits().paths['/egress/ok/beacon.txt'] >= 1, { deadlineMs: 10000 });
  assert.equal(deniedHits(), 0, JSON.stringify(denied.hits()));
});

test('a service worker, a popup and a top-level navigation to the denied host get nowhere', async () => {
  const context = browser.contexts()[0];
  const page = context.pages()[0];
  await probe(page, `http://127.0.0.1:${M()}`, ['serviceworker']);
  const popup = context.waitForEvent('page', { timeout: 30000 });
  await page.evaluate((u) => window.open(u), evil('/leak/popup'));
  const p = await popup;
  await p.waitForLoadState('domcontentloaded').catch(() => {});
  await p.close();
  const nav = await page.goto(evil('/leak/navigate')).catch((e) => e);
  assert.ok(nav instanceof Error || nav.status() === 403, 'the navigation is refused');
  const direct = await page.goto(`http://127.0.0.1:${D()}/leak/port`).catch((e) => e);
  assert.ok(direct instanceof Error || direct.status() === 403, 'its address and port are refused too');
  assert.equal(deniedHits(), 0, JSON.stringify(denied.hits()));
});

test('a context the client creates goes through the session proxy too', async () => {
  const ctx = await browser.newContext();
  try {
    const page = await ctx.newPage();
    const ok = await page.goto(shop('/index.html'));
    assert.equal(ok.status(), 200, 'the allowed site loads in the new context');
    await page.evaluate((u) => fetch(u).catch(() => 0), evil('/leak/context-fetch'));
    const bad = await page.goto(evil('/leak/context')).catch((e) => e);
    assert.ok(bad instanceof Error || bad.status() === 403);
  } finally {
    await ctx.close();
  }
  assert.equal(deniedHits(), 0, JSON.stringify(denied.hits()));
});

test("the client's own Fetch interception cannot steer a request to the denied host", async () => {
  const page = browser.contexts()[0].pages()[0];
  await page.route('**/egress/ok/steered.json', (route) => route.continue({ url: evil('/leak/steered') }));
  await page.goto(shop('/index.html'));
  await page.evaluate((u) => fetch(u).then((r) => r.status).catch(() => 0), shop('/egress/ok/steered.json'));
  await page.unroute('**/egress/ok/steered.json');
  assert.equal(deniedHits(), 0, JSON.stringify(denied.hits()));
  assert.equal(denied.connections(), 0, 'the denied server saw no connection at all');
});

test('with a warm pool (a context per session, its proxy set on the context) new tabs and contexts stay on the proxy', async () => {
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'egress-drill.json'), 'utf8'));
  policy.egress.allow.push(`shop.test:${M()}`, `127.0.0.1:${M()}`);
  policy.cdp = 'allow';
  const pooled = await startServe({ tenants: { a: { policy } }, limits: { unused_ttl_s: 600 }, warmPool: 1 });
  let b;
  try {
    const s = await newSession(pooled, 'a');
    b = await chromium.connectOverCDP(s.url, { timeout: 120000 });
    // a tab opened without a context lands in the session's own
    const page = await b.contexts()[0].newPage();
    assert.equal((await page.goto(shop('/index.html'))).status(), 200);
    const bad = await page.goto(evil('/leak/pooled-tab')).catch((e) => e);
    assert.ok(bad instanceof Error || bad.status() === 403);
    const ctx = await b.newContext();
    const p2 = await ctx.newPage();
    assert.equal((await p2.goto(shop('/index.html'))).status(), 200, 'the new context reaches the allowed site through the proxy');
    const bad2 = await p2.goto(evil('/leak/pooled-context')).catch((e) => e);
    assert.ok(bad2 instanceof Error || bad2.status() === 403);
    await ctx.close();
  } finally {
    if (b) await b.close();
    await pooled.stop();
    pooled.removeDataDir();
  }
  assert.equal(deniedHits(), 0, JSON.stringify(denied.hits()));
  assert.equal(denied.connections(), 0);
});
