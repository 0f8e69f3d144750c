/*
 * Frames: the snapshot inlines iframes with frame-prefixed refs, and those
 * refs work for clicks, for a same-origin and a cross-origin frame.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, evaluate, snapshot, findRef, textOf } from '../e2e/lib.mjs';

const h = useGlassbox();

test('same-origin iframe: its button has an f-prefixed ref and can be clicked', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/iframe.html') });
  const snap = await snapshot(h.client);
  const inner = findRef(snap, 'button', 'Inner button');
  assert.match(inner, /^f\d+e\d+$/, `a button inside a frame gets a frame ref: ${inner}`);
  assert.ok(snap.nodes.some((n) => n.role === 'iframe'), 'the iframe itself is in the snapshot');
  await ok(h.client, 'browser_click', { target: inner, element: 'Inner button' });
  const status = await evaluate(
    h.client,
    "() => document.getElementById('frame').contentDocument.getElementById('inner-status').textContent",
  );
  assert.equal(status, 'Inner button clicked');
  const after = await snapshot(h.client);
  assert.match(after.text, /Inner button clicked/);
});

test('cross-origin iframe: its button has an f-prefixed ref and can be clicked', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/cross-iframe.html') });
  const snap = await snapshot(h.client);
  assert.equal(h.fixture.hits().paths['/frame-inner.html'] >= 1, true, 'the frame was loaded from the other origin');
  const inner = findRef(snap, 'button', 'Inner button');
  assert.match(inner, /^f\d+e\d+$/);
  assert.match(snap.text, /Inner button not clicked/);
  const clicked = await ok(h.client, 'browser_click', { target: inner, element: 'Inner button' });
  // the frame hides its frameElement from the button's document: the
  // code's frame locator is read from the page that holds it
  assert.match(textOf(clicked), /### Ran Playwright code\n```js\nawait page\.locator\('iframe'\)(\.first\(\))?\.contentFrame\(\)\.getByRole\('button', \{ name: 'Inner button' \}\)\.click\(\);/, textOf(clicked));
  const after = await snapshot(h.client);
  assert.match(after.text, /Inner button clicked/);
  assert.doesNotMatch(after.text, /Inner button not clicked/);
});
