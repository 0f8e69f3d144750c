/*
 * The site's icon is no page's request: after a navigation's load the
 * browser fetches /favicon.ico by itself, and an action's settle step does
 * not wait for it. Against a real Chromium and a site whose icon never
 * answers while the test runs, a navigate and a click that follows a link
 * settle without a settle_timeout naming the icon, and the page's own
 * requests (a fetch its script starts on load) are still waited for.
 */
import { test, before, after } from 'node:test';
import http from 'node:http';
import { assert, openGlassbox, ok, sc, dump, snapshot, findRef } from '../e2e/lib.mjs';

let site;
let gb;
let base;
const held = []; /* responses to /favicon.ico, answered at the end */

before(async () => {
  site = http.createServer((req, res) => {
    if (req.url === '/favicon.ico') {
      held.push(res); /* answered only when the test ends */
      return;
    }
    if (req.url === '/data') {
      setTimeout(() => { res.writeHead(200, { 'content-type': 'text/plain' }); res.end('loaded data'); }, 300);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html' });
    if (req.url === '/second') {
      res.end('<!doctype html><title>Second</title><p>Second page</p>');
      return;
    }
    res.end(`<!doctype html><title>First</title>
      <p id="status">waiting</p><a href="/second">Go to the second page</a>
      <script>fetch('/data').then((r) => r.text()).then((t) => { document.getElementById('status').textContent = t; });</script>`);
  });
  await new Promise((r) => site.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${site.address().port}`;
  gb = await openGlassbox();
});

after(async () => {
  for (const res of held) res.destroy();
  if (gb) {
    await gb.close();
    gb.removeDataDir();
  }
  if (site) await new Promise((r) => site.close(r));
});

function assertIconNotAwaited(r) {
  const pending = (sc(r).pending || []).map((p) => p.url);
  assert.ok(!pending.some((u) => u.endsWith('/favicon.ico')), `the icon is not waited for: ${dump(r)}`);
  assert.notEqual(sc(r).settle_timeout, true, `the action settled: ${dump(r)}`);
}

test('a navigate settles without waiting for the site\'s icon, and waits for the page\'s own fetch', async () => {
  const r = await ok(gb.client, 'browser_navigate', { url: base + '/' });
  assertIconNotAwaited(r);
  assert.ok(held.length >= 1, 'the browser asked for the icon (the test would show nothing otherwise)');
  const status = sc(await ok(gb.client, 'browser_evaluate', { function: '() => document.getElementById("status").textContent' })).result;
  assert.equal(status, 'loaded data', 'the page\'s fetch on load was waited for');
});

test('a click that follows a link settles without waiting for the icon', async () => {
  const r = await ok(gb.client, 'browser_click', { target: findRef(await snapshot(gb.client), 'link', 'Go to the second page') });
  assertIconNotAwaited(r);
  assert.equal(sc(r).url ?? (await ok(gb.client, 'browser_evaluate', { function: '() => location.href' })).structuredContent.result, base + '/second', dump(r));
});
