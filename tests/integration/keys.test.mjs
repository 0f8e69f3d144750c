/*
 * Keys: browser_press_key reaches the focused element; browser_type with
 * submit presses Enter after typing.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, sc, evaluate, textContent } from '../e2e/lib.mjs';

const h = useGlassbox();

test('press_key sends a named key to the page', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/keys.html') });
  await ok(h.client, 'browser_type', { target: '#q', text: 'glass' });
  await ok(h.client, 'browser_press_key', { key: 'ArrowLeft' });
  assert.equal(await textContent(h.client, '#last-key'), 'Last key: ArrowLeft');
  assert.equal(await textContent(h.client, '#submitted'), 'Not searched');
});

test('press_key Enter submits the form', async () => {
  await ok(h.client, 'browser_press_key', { key: 'Enter' });
  assert.equal(await textContent(h.client, '#submitted'), 'Searched for: glass');
});

test('press_key types a printable character into the focused field', async () => {
  await ok(h.client, 'browser_press_key', { key: 'End' });
  await ok(h.client, 'browser_press_key', { key: 'x' });
  assert.equal(await evaluate(h.client, "() => document.getElementById('q').value"), 'glassx');
});

test('type with submit presses Enter after typing', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/keys.html') });
  const r = await ok(h.client, 'browser_type', { target: '#q', text: 'boxes', submit: true });
  assert.equal(sc(r).value, 'boxes');
  assert.equal(await textContent(h.client, '#submitted'), 'Searched for: boxes');
});
