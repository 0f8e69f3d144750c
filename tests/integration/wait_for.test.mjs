/*
 * browser_wait_for: waits for text to appear or to go, or for a time.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, dump, textOf, textContent, evaluate, assertToolError } from '../e2e/lib.mjs';

const h = useGlassbox();

test('waits for text that appears after a delay', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/delayed.html') });
  await ok(h.client, 'browser_wait_for', { text: 'Results are ready' });
  assert.equal(await textContent(h.client, '#results'), 'Results are ready');
});

test('waits for text to go away', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/delayed.html') });
  await ok(h.client, 'browser_wait_for', { textGone: 'Loading results…' });
  assert.equal(await evaluate(h.client, "() => document.getElementById('loading')"), null);
  assert.doesNotMatch(await evaluate(h.client, '() => document.body.innerText'), /Loading results/);
});

test('waits for a time', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/delayed.html') });
  await ok(h.client, 'browser_wait_for', { time: 1 });
  assert.equal(await textContent(h.client, '#results'), 'Results are ready');
});

test('text already present returns at once', async () => {
  const r = await ok(h.client, 'browser_wait_for', { text: 'Delayed text' });
  assert.ok(!r.isError, dump(r));
});

test('without text, textGone or time it is an error', async () => {
  const r = await callTool(h.client, 'browser_wait_for', {});
  const text = assertToolError(r, 'wait_for with nothing to wait for');
  assert.match(text, /text|time/);
});

test('with text, time is the timeout of the wait for it, not a wait of its own', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/delayed.html') });
  const r = await ok(h.client, 'browser_wait_for', { text: 'Results are ready', time: 20 });
  assert.match(textOf(r), /waitFor\(\{ state: 'visible', timeout: 20000 \}\)/, textOf(r));
  assert.doesNotMatch(textOf(r), /setTimeout/, 'no sleep before the wait');
  const never = await callTool(h.client, 'browser_wait_for', { text: 'this text never appears', time: 1 });
  const text = assertToolError(never, 'a text that never appears');
  assert.match(text, /Timeout 1s exceeded/, text);
  assert.equal(sc(never).error.code, 'timeout', dump(never));
});
