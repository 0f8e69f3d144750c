/*
 * Locators as targets: role=ROLE[name="..."], text=... and css=... find
 * exactly one element in the page and its frames (same-origin and
 * cross-origin), get the same actionability checks as refs, and say
 * clearly when nothing or several things match.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, callTool, sc, dump, evaluate, snapshot } from '../e2e/lib.mjs';

const h = useGlassbox();

test('role and name: a button in the page', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/shop/index.html') });
  const r = await ok(h.client, 'browser_click', {
    target: 'role=button[name="Add Coffee beans to cart"]',
    expect: { text: 'Cart (1)' },
  });
  assert.match(sc(r).verdicts?.[0]?.observed ?? '', /present/, dump(r));
});

test('text: a link by its visible text, and a text that matches nothing', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/shop/index.html') });
  await ok(h.client, 'browser_click', { target: 'text="Checkout"', expect: { urlContains: '/shop/checkout.html' } });
  const r = await callTool(h.client, 'browser_click', { target: 'text=No such words' });
  assert.equal(r.isError, true, dump(r));
  assert.equal(sc(r).error.code, 'no_match', dump(r));
  assert.match(sc(r).error.message, /no visible element has the text "No such words"/, dump(r));
});

test('several matches and a wrong name are errors that say what is there', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/shop/index.html') });
  let r = await callTool(h.client, 'browser_click', { target: 'text=Add to cart' });
  assert.equal(sc(r).error?.code, 'ambiguous_target', dump(r));
  assert.match(sc(r).error.message, /matches 2 elements/, dump(r));
  r = await callTool(h.client, 'browser_click', { target: 'role=button[name="Add Milk to cart"]' });
  assert.equal(sc(r).error?.code, 'no_match', dump(r));
  assert.match(sc(r).error.message, /no button named "Add Milk to cart" on the page; the buttons there are named "Add Coffee beans to cart", "Add Tea to cart"/, dump(r));
  r = await callTool(h.client, 'browser_click', { target: 'role=button[name=Save]' });
  assert.equal(sc(r).error?.code, 'bad_target', dump(r));
});

test('same-origin frame: by text and by CSS', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/iframe.html') });
  await ok(h.client, 'browser_click', { target: 'text=Inner button' });
  const status = await evaluate(
    h.client,
    "() => document.getElementById('frame').contentDocument.getElementById('inner-status').textContent",
  );
  assert.equal(status, 'Inner button clicked');
  await ok(h.client, 'browser_click', { target: 'css=#inner' });
});

test('cross-origin frame: by role and name', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/cross-iframe.html') });
  await ok(h.client, 'browser_click', { target: 'role=button[name="Inner button"]' });
  const after = await snapshot(h.client);
  assert.match(after.text, /Inner button clicked/);
});
