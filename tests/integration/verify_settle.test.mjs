/*
 * Settling ends at the main document's load, or at a short bound after
 * its DOMContentLoaded, for subresources the action did not start (an
 * image that never loads): the result says so (settle_timeout, the
 * requests still pending), and what an action did start is still waited
 * for.
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, callTool, ok, sc, dump, evaluate, textOf, textContent,
} from '../e2e/lib.mjs';

const h = useGlassbox();

test('a page whose image never loads: navigate ends after DOMContentLoaded and names the pending image', async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/verify/never-loads.html') });
  assert.equal(await evaluate(h.client, '() => document.readyState'), 'interactive', 'the load event really never came');
  assert.equal(sc(r).settle_timeout, true, dump(r));
  assert.ok(Array.isArray(sc(r).pending), `the pending requests are listed: ${dump(r)}`);
  assert.ok(sc(r).pending.some((p) => p.url.endsWith('/hang/photo.jpg') && p.type === 'Image'), dump(r));
  assert.match(textOf(r), /DOMContentLoaded/, `the text says why the wait ended: ${textOf(r)}`);
  assert.match(textOf(r), /\/hang\/photo\.jpg/, 'and names the pending request');
  assert.equal(await textContent(h.client, 'h1'), 'Image that never loads');
});

test('on that page, a click still waits for the request it started', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/never-loads.html') });
  const r = await ok(h.client, 'browser_click', { target: '#save' });
  assert.equal(await textContent(h.client, '#status'), 'Saved after 300 ms', `the click's fetch was waited for: ${dump(r)}`);
  assert.ok(!sc(r).settle_timeout, `the image the click did not start is not waited for: ${dump(r)}`);
});

test('back to the page whose image never loads ends the same way', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/never-loads.html') });
  await ok(h.client, 'browser_navigate', { url: h.url('/second.html') });
  const r = await ok(h.client, 'browser_navigate_back', {});
  assert.match(sc(r).url || '', /never-loads\.html$/, dump(r));
  if (sc(r).settle_timeout) {
    assert.ok(sc(r).pending.some((p) => p.url.endsWith('/hang/photo.jpg')), `what was pending is named: ${dump(r)}`);
    assert.match(textOf(r), /DOMContentLoaded/, textOf(r));
  }
});
