/*
 * Where a click's press landed, told by its landing recorder as the press
 * arrives (a binding only glassbox's isolated world has), through real
 * Chromium and the MCP SDK client: the press, release and click are sent
 * together and the press is not read back after them; a press whose
 * handler replaces the document, and a link that does so on the click,
 * are still known to have landed on their element, and so is a press in
 * a closed shadow root, which the window's listener sees only as its
 * host. The page cannot see or call the binding.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, sc, textOf, snapshot, findRef, evaluate } from '../e2e/lib.mjs';
import { callLogged } from './cdp_log_helpers.mjs';

const h = useGlassbox({ options: () => ({ env: { GLASSBOX_LOG: 'debug' } }) });

/* The methods sent after the click's last mouse event. */
function afterInput(methods) {
  const last = methods.lastIndexOf('Input.dispatchMouseEvent');
  assert.ok(last >= 0, methods.join(' '));
  return methods.slice(last + 1);
}

/* The page's URL once it ends with tail (read again for up to 10 s). */
async function urlOnceAt(tail) {
  const until = Date.now() + 10000;
  for (;;) {
    const url = await evaluate(h.client, '() => location.href');
    if (url.endsWith(tail) || Date.now() > until) return url;
    await new Promise((r) => setTimeout(r, 100));
  }
}

test('a click is sent in one go and its press is told, not read back after it', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  const target = findRef(await snapshot(h.client), 'button', 'Click target');
  const { r, methods } = await callLogged(h, 'browser_click', { target });
  assert.equal(sc(r).ok, true, textOf(r));
  assert.equal(sc(r).landed, 'on target', textOf(r));
  const mouse = methods.filter((m) => m === 'Input.dispatchMouseEvent').length;
  assert.equal(mouse, 3, `moved, pressed, released: ${methods.join(' ')}`);
  const first = methods.indexOf('Input.dispatchMouseEvent');
  assert.ok(!methods.slice(first, first + 3).some((m) => m !== 'Input.dispatchMouseEvent'),
    `nothing between the three mouse events: ${methods.join(' ')}`);
  /* the click event's read-back, with settling's round trip: no press read */
  const reads = afterInput(methods).filter((m) => m === 'Runtime.callFunctionOn');
  assert.equal(reads.length, 1, `one read-back after the input: ${methods.join(' ')}`);
  assert.equal(await evaluate(h.client, "() => document.getElementById('single').textContent"), 'Clicks: 1');
});

test('a press whose handler leaves the page still landed on target', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/press-leaves.html') });
  const go = findRef(await snapshot(h.client), 'button', 'Leave on press');
  const { r } = await callLogged(h, 'browser_click', { target: go });
  assert.equal(sc(r).ok, true, textOf(r));
  assert.equal(sc(r).landed, 'on target', textOf(r));
  assert.doesNotMatch(textOf(r), /not read back/, textOf(r));
  assert.ok((await urlOnceAt('/clicks.html?from=press')).endsWith('/clicks.html?from=press'));
});

test('a link that leaves the page on the click landed on target', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/press-leaves.html') });
  const link = findRef(await snapshot(h.client), 'link', 'Click kinds page');
  const { r } = await callLogged(h, 'browser_click', { target: link });
  assert.equal(sc(r).ok, true, textOf(r));
  assert.equal(sc(r).landed, 'on target', textOf(r));
  assert.equal(sc(r).navigated, true, textOf(r));
  assert.ok((await urlOnceAt('/clicks.html')).endsWith('/clicks.html'));
});

test('a press in a closed shadow root is told as the shadow root saw it: on target', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/press-leaves.html') });
  const button = findRef(await snapshot(h.client), 'button', 'Shadow button');
  const { r } = await callLogged(h, 'browser_click', { target: button });
  assert.equal(sc(r).ok, true, textOf(r));
  assert.equal(sc(r).landed, 'on target', textOf(r));
  assert.equal(await evaluate(h.client, "() => document.getElementById('shadow-clicks').textContent"), 'Shadow clicks: 1');
});

test("the page's own scripts cannot see or call the press binding", async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/press-leaves.html') });
  assert.equal(await evaluate(h.client, '() => typeof window.__glassboxPressed'), 'undefined');
  assert.equal(await evaluate(h.client, "() => Object.getOwnPropertyNames(window).filter((n) => /glassbox/i.test(n)).join(',')"), '');
});
