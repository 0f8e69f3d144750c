/*
 * cdp_camera.test.mjs - the CDP endpoint's evidence screenshots are the
 * relay's own (docs/cdp.md, relay/camera.c): taken on a DevTools
 * connection of glassbox's, so the client sees nothing of them and its
 * calls are answered as sent; a navigation's screenshot is kept even when
 * the client leaves right after the load; navigations that come faster
 * than screenshots are joined, each one accounted for, and the last page
 * is always photographed. Real Chromium behind the relay, a raw websocket
 * client (ws).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startFixtureServer, pollUntil } from '../e2e/lib.mjs';
import { startCdpServe, newSession, rawClient, records, waitRecord } from './cdp_helpers.mjs';

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

/* A raw client attached to the session's tab, with Page events on. */
async function onTab(s) {
  const c = await rawClient(s.url);
  const targets = await c.call('Target.getTargets');
  const tab = targets.result.targetInfos.find((t) => t.type === 'page');
  assert.ok(tab, JSON.stringify(targets));
  const a = await c.call('Target.attachToTarget', { targetId: tab.targetId, flatten: true });
  const sid = a.result.sessionId;
  await c.call('Page.enable', {}, sid);
  return { c, sid };
}

/* Navigates to url and waits for its load event (the nth so far). */
async function navigate(c, sid, url) {
  const before = c.events.filter((e) => e.method === 'Page.loadEventFired' && e.sessionId === sid).length;
  const r = await c.call('Page.navigate', { url }, sid);
  assert.ok(r.result && r.result.frameId, JSON.stringify(r));
  const ok = await pollUntil(() => c.events.filter((e) => e.method === 'Page.loadEventFired' && e.sessionId === sid).length > before,
    { deadlineMs: 60000, intervalMs: 10 });
  assert.ok(ok, `the load of ${url}`);
}

const shotsOf = (url) => records(svc, 'a', 'tool_call').filter((r) => r.body && r.body.source === 'cdp' && r.body.url === url);

test('the client sees nothing of the evidence screenshots, and one taken at its last load is kept after it left', async () => {
  const s = await newSession(svc, 'a');
  const { c, sid } = await onTab(s);
  const url = site.url + '/form.html?camera=1';
  await navigate(c, sid, url);
  // while the screenshot of the load is taken, the client's calls are answered, in order
  const answers = await Promise.all(Array.from({ length: 50 }, (_, i) => c.call('Runtime.evaluate', { expression: `${i} * 2`, returnByValue: true }, sid)));
  answers.forEach((a, i) => assert.equal(a.result.result.value, i * 2));
  c.close();
  await c.closed;
  const bye = await waitRecord(svc, 'a', (r) => r.kind === 'cdp_disconnected' && r.body.endpoint === s.id, 'of the disconnection');
  assert.deepEqual(c.others, [], 'no reply the client did not ask for');
  const attached = c.events.filter((e) => e.method === 'Target.attachedToTarget').map((e) => e.params.sessionId);
  assert.deepEqual(attached, [sid], 'the client sees its own session only, not the camera\'s');
  const shot = shotsOf(url).find((r) => r.body.screenshot === 'navigation');
  assert.ok(shot, `the screenshot of the load: ${JSON.stringify(records(svc, 'a').map((r) => r.kind))}`);
  assert.ok(shot.artifacts.some((a) => a.mime === 'image/png'));
  assert.equal(bye.body.screenshots_failed, 0);
  assert.equal(bye.body.screenshots, 1);
});

test('navigations faster than screenshots are joined, each accounted for, and the last page is photographed', async () => {
  const s = await newSession(svc, 'a');
  const { c, sid } = await onTab(s);
  const n = 12;
  for (let i = 0; i < n; i++) await navigate(c, sid, `${site.url}/second.html?burst=${i}`);
  c.close();
  await c.closed;
  const bye = await waitRecord(svc, 'a', (r) => r.kind === 'cdp_disconnected' && r.body.endpoint === s.id, 'of the disconnection');
  const navs = records(svc, 'a', 'cdp_navigation').filter((r) => r.body.endpoint === s.id);
  assert.equal(navs.length, n);
  assert.equal(bye.body.screenshots_failed, 0, JSON.stringify(records(svc, 'a', 'evidence_failed').map((r) => r.body)));
  assert.equal(bye.body.screenshots + bye.body.screenshots_joined, n, JSON.stringify(bye.body));
  assert.ok(bye.body.screenshots >= 1);
  const kept = records(svc, 'a', 'tool_call').filter((r) => r.body && r.body.source === 'cdp' && /burst=/.test(r.body.url));
  assert.equal(kept.length, bye.body.screenshots);
  // each screenshot is an operation of its own in the trail
  const ops = kept.map((r) => r.operation);
  assert.ok(ops.every((o) => /^op-[0-9a-f]{24}$/.test(o)), JSON.stringify(ops));
  assert.equal(new Set(ops).size, ops.length);
  assert.ok(shotsOf(`${site.url}/second.html?burst=${n - 1}`).length === 1, `the last page: ${JSON.stringify(kept.map((r) => r.body.url))}`);
});
