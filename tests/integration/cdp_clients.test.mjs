/*
 * cdp_clients.test.mjs - QA suites point Playwright and Puppeteer at a
 * glassbox session's CDP endpoint (docs/cdp.md): POST /sessions, then
 * chromium.connectOverCDP() / puppeteer.connect() on the wsEndpoint, a
 * small spec (navigate, fill, click, assert text, screenshot) against the
 * fixture site, real Chromium behind the relay. The tenant's trail holds
 * the connection, the navigation, the input and the screenshots, and
 * `glassbox audit verify` accepts it.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { chromium, puppeteer } from '../e2e/cdp-libs.mjs';
import { startFixtureServer, isPng } from '../e2e/lib.mjs';
import { startCdpServe, newSession, records, waitRecord, auditVerify, baseOf, refusedUpgrade } from './cdp_helpers.mjs';

let site;
let svc;

before(async () => {
  site = await startFixtureServer();
  svc = await startCdpServe();
});

after(async () => {
  await svc.stop();
  svc.removeDataDir();
  await site.close();
});

/* The records of one endpoint session. */
const of = (id, kind) => records(svc, 'a', kind).filter((r) => r.body && r.body.endpoint === id);

test('Playwright connectOverCDP runs a spec through the relay, and the trail holds it', async () => {
  const s = await newSession(svc, 'a');
  const browser = await chromium.connectOverCDP(s.url, { timeout: 120000 });
  try {
    const context = browser.contexts()[0];
    const page = context.pages()[0] || (await context.newPage());
    const res = await page.goto(site.url + '/form.html');
    assert.equal(res.status(), 200);
    await page.fill('#name', 'Ada');
    await page.fill('#password', 'hunter2-secret');
    await page.click('#save');
    await page.waitForFunction(() => document.querySelector('#status').textContent.startsWith('Saved'), null, { timeout: 60000 });
    assert.equal(await page.textContent('#status'), 'Saved: Ada');
    const png = await page.screenshot();
    assert.ok(isPng(png), 'the client gets a PNG');
    // a second tab the client opens lands in the session, intercepted like the first
    const second = await context.newPage();
    await second.goto(site.url + '/second.html');
    assert.match(await second.title(), /Second/i);
  } finally {
    await browser.close();
  }
  assert.equal(site.hits().requests['POST /api/save'] >= 1, true, 'the fixture saw the save');

  await waitRecord(svc, 'a', (r) => r.kind === 'cdp_disconnected' && r.body.endpoint === s.id, 'of the disconnection');
  assert.equal(of(s.id, 'cdp_connected').length, 1);
  const navs = of(s.id, 'cdp_navigation');
  const formNav = navs.find((r) => r.body.url === site.url + '/form.html');
  assert.ok(formNav, `a navigation record for the form: ${JSON.stringify(navs.map((r) => r.body))}`);
  assert.equal(formNav.body.status, 200);
  assert.ok(navs.some((r) => r.body.url === site.url + '/second.html'), 'the second tab is recorded too');
  const inputs = of(s.id, 'cdp_input');
  const click = inputs.find((r) => r.body.kind === 'mousePressed');
  assert.ok(click, 'the click is recorded');
  assert.equal(click.body.element.tag, 'button');
  assert.equal(click.body.element.name, 'Save');
  assert.equal(click.body.point.length, 2);
  // the release that ends the click is recorded with the element its press was probed on
  const release = inputs.slice(inputs.indexOf(click) + 1).find((r) => r.body.kind === 'mouseReleased');
  assert.ok(release, 'the release is recorded');
  assert.deepEqual(release.body.point, click.body.point);
  assert.equal(release.body.element.name, 'Save');
  assert.ok(inputs.some((r) => r.body.method === 'Input.insertText' && r.body.length === 3), 'the fill is recorded by length');
  // screenshots after navigation and during input, kept as signed evidence
  const shots = await waitRecord(svc, 'a', (r) => r.kind === 'tool_call' && r.body && r.body.source === 'cdp' && r.body.screenshot === 'navigation', 'of a screenshot after navigation');
  assert.ok(shots.artifacts.length >= 1 && shots.artifacts.some((a) => a.mime === 'image/png'));
  await waitRecord(svc, 'a', (r) => r.kind === 'tool_call' && r.body && r.body.source === 'cdp' && r.body.screenshot === 'input', 'of a screenshot during input');
  // the typed password is nowhere in the trail
  const trail = JSON.stringify(records(svc, 'a'));
  assert.equal(trail.includes('hunter2-secret'), false);
  const v = auditVerify(svc.dataDir);
  assert.equal(v.status, 0, v.out);
});

test('Puppeteer connect runs the same spec through the relay', async () => {
  const s = await newSession(svc, 'a');
  const browser = await puppeteer.connect({ browserWSEndpoint: s.url, protocolTimeout: 120000, defaultViewport: null });
  try {
    const page = await browser.newPage();
    const res = await page.goto(site.url + '/form.html');
    assert.equal(res.status(), 200);
    await page.type('#name', 'Grace');
    await page.click('#save');
    await page.waitForFunction(() => document.querySelector('#status').textContent.startsWith('Saved'), { timeout: 60000 });
    assert.equal(await page.$eval('#status', (e) => e.textContent), 'Saved: Grace');
    const png = await page.screenshot();
    assert.ok(isPng(Buffer.from(png)));
  } finally {
    await browser.disconnect();
  }
  await waitRecord(svc, 'a', (r) => r.kind === 'cdp_disconnected' && r.body.endpoint === s.id, 'of the disconnection');
  assert.ok(of(s.id, 'cdp_navigation').some((r) => r.body.url === site.url + '/form.html'));
  const keys = of(s.id, 'cdp_input').filter((r) => r.body.method === 'Input.dispatchKeyEvent');
  assert.ok(keys.length >= 5, 'each typed key is recorded');
  assert.ok(keys.every((r) => r.body.key === '[character]'), 'typed characters are not recorded');
  assert.equal(keys[0].body.element.tag, 'input');
  const v = auditVerify(svc.dataDir);
  assert.equal(v.status, 0, v.out);
});

test('one client at a time; DELETE /sessions/ID ends the session and its client', async () => {
  const s = await newSession(svc, 'a');
  const browser = await chromium.connectOverCDP(s.url, { timeout: 120000 });
  const second = await refusedUpgrade(s.url);
  assert.equal(second.status, 409, 'a second client is refused while one is connected');
  assert.match(second.body, /already connected/);
  const health = await svc.admin('GET', '/healthz');
  assert.equal(health.json.cdp_sessions, 1);
  const metrics = await svc.admin('GET', '/metrics');
  assert.match(metrics.text, /glassbox_cdp_sessions 1/);
  const disconnected = new Promise((res) => browser.on('disconnected', res));
  const del = await fetch(`${baseOf(svc)}/sessions/${s.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.tokens.a}` } });
  assert.equal(del.status, 200);
  await disconnected;
  const again = await fetch(`${baseOf(svc)}/sessions/${s.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.tokens.a}` } });
  assert.equal(again.status, 404);
});
