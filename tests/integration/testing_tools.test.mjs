/*
 * The testing group: browser_verify_* and browser_generate_locator, each
 * a verdict re-read from the page (a failed verification is an error
 * result), off unless "caps" turns the group on.
 */
import { test } from 'node:test';
import { assert, callTool, ok, sc, dump, snapshot, findRef, assertToolError } from '../e2e/lib.mjs';
import { useGlassboxWith } from './interact_helpers.mjs';

const h = useGlassboxWith('loopback', { caps: ['testing'] });

const verdict = (r) => (sc(r).verdicts || [])[0] || {};

test('the testing tools are listed with "caps": ["testing"], the vision ones are not', async () => {
  const names = (await h.client.listTools()).tools.map((t) => t.name);
  for (const n of ['browser_verify_element_visible', 'browser_verify_text_visible', 'browser_verify_list_visible',
    'browser_verify_value', 'browser_generate_locator'])
    assert.ok(names.includes(n), `${n}: ${names}`);
  assert.ok(!names.includes('browser_mouse_click_xy'));
});

test('verify_element_visible: by role and accessible name', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/testing.html') });
  const r = await ok(h.client, 'browser_verify_element_visible', { role: 'button', accessibleName: 'Pay now' });
  assert.equal(verdict(r).ok, true, dump(r));
  const no = await callTool(h.client, 'browser_verify_element_visible', { role: 'button', accessibleName: 'Refund' });
  assert.match(assertToolError(no), /Refund/);
  assert.equal(verdict(no).ok, false, dump(no));
});

test('verify_text_visible: hidden text does not count', async () => {
  const r = await ok(h.client, 'browser_verify_text_visible', { text: 'Bread' });
  assert.equal(verdict(r).ok, true, dump(r));
  const hidden = await callTool(h.client, 'browser_verify_text_visible', { text: 'CODE-77' });
  assert.match(assertToolError(hidden), /CODE-77/);
});

test('verify_list_visible: every item, or the missing one named', async () => {
  const ref = findRef(await snapshot(h.client), 'list', 'Basket');
  await ok(h.client, 'browser_verify_list_visible', { element: 'Basket', target: ref, items: ['Apples', 'Cheese'] });
  const r = await callTool(h.client, 'browser_verify_list_visible', { element: 'Basket', target: ref, items: ['Apples', 'Pears'] });
  assert.match(assertToolError(r), /Pears/);
});

test('verify_value: textbox, checkbox, combobox', async () => {
  const ok1 = await ok(h.client, 'browser_verify_value', { type: 'textbox', element: 'City', target: '#city', value: 'Lyon' });
  assert.equal(verdict(ok1).observed, 'Lyon', dump(ok1));
  const bad = await callTool(h.client, 'browser_verify_value', { type: 'textbox', element: 'City', target: '#city', value: 'Paris' });
  assert.match(assertToolError(bad), /Lyon/);
  assert.equal(verdict(bad).expected, 'Paris', dump(bad));
  await ok(h.client, 'browser_verify_value', { type: 'checkbox', element: 'Gift wrap', target: '#gift', value: 'true' });
  const off = await callTool(h.client, 'browser_verify_value', { type: 'checkbox', element: 'Gift wrap', target: '#gift', value: 'false' });
  assertToolError(off);
  await ok(h.client, 'browser_verify_value', { type: 'combobox', element: 'Shipping', target: '#ship', value: 'Express' });
});

test('generate_locator: a locator that finds the same element, usable as a target', async () => {
  const ref = findRef(await snapshot(h.client), 'button', 'Pay now');
  const r = await ok(h.client, 'browser_generate_locator', { element: 'Pay now', target: ref });
  const loc = sc(r).locator;
  assert.equal(loc, 'role=button[name="Pay now"]', dump(r));
  assert.match(sc(r).playwright || '', /getByRole\('button', \{ name: 'Pay now' \}\)/, dump(r));
  await ok(h.client, 'browser_verify_value', { type: 'textbox', element: 'City', target: loc.replace('button', 'textbox').replace('Pay now', 'City'), value: 'Lyon' });
});
