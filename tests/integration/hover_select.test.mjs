/*
 * browser_hover shows a tooltip; browser_select_option picks options and
 * re-reads the value.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, dump, evaluate, textContent, snapshot, findRef } from '../e2e/lib.mjs';

const h = useGlassbox();

test('hover shows the tooltip', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/hover.html') });
  assert.equal(await evaluate(h.client, "() => document.getElementById('tooltip').hidden"), true);
  const ref = findRef(await snapshot(h.client), 'button', 'Help');
  await ok(h.client, 'browser_hover', { target: ref });
  assert.equal(await evaluate(h.client, "() => document.getElementById('tooltip').hidden"), false);
  assert.equal(await textContent(h.client, '#tooltip'), 'Opens the help center');
  assert.match((await snapshot(h.client)).text, /Opens the help center/);
});

test('select_option picks one option; the value is re-read', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/select.html') });
  const ref = findRef(await snapshot(h.client), 'combobox', 'Delivery speed');
  const r = await ok(h.client, 'browser_select_option', { target: ref, element: 'Delivery speed', values: ['express'] });
  assert.equal(sc(r).value, 'express', dump(r));
  assert.equal(await evaluate(h.client, "() => document.getElementById('speed').value"), 'express');
  assert.equal(await textContent(h.client, '#chosen'), 'Chosen: express', 'the page saw the change event');
});

test('select_option picks several options of a multiple select', async () => {
  await ok(h.client, 'browser_select_option', { target: '#extras', values: ['gift', 'insurance'] });
  assert.deepEqual(
    await evaluate(h.client, "() => Array.from(document.getElementById('extras').selectedOptions, (o) => o.value)"),
    ['gift', 'insurance'],
  );
  assert.equal(await textContent(h.client, '#extras-chosen'), 'Extras: gift, insurance');
});

test('an option that does not exist is an error naming it', async () => {
  const r = await callTool(h.client, 'browser_select_option', { target: '#speed', values: ['teleport'] });
  assert.equal(r.isError, true, dump(r));
  assert.match(r.content[0].text, /teleport/);
  assert.equal(await evaluate(h.client, "() => document.getElementById('speed').value"), 'express');
});
