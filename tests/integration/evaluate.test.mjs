/*
 * browser_evaluate: returns JSON values (objects, arrays, null), runs on a
 * target element, awaits promises, reports exceptions as errors.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, textOf, dump, evaluate, snapshot, findRef } from '../e2e/lib.mjs';

const h = useGlassbox();

test('returns an object as a JSON value', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const v = await evaluate(
    h.client,
    "() => ({ title: document.title, fields: Array.from(document.querySelectorAll('input'), (i) => i.id), count: 4, none: null, nested: { ok: true } })",
  );
  assert.deepEqual(v, {
    title: 'Account settings',
    fields: ['name', 'password', 'newsletter'],
    count: 4,
    none: null,
    nested: { ok: true },
  });
});

test('returns numbers, booleans and arrays', async () => {
  assert.equal(await evaluate(h.client, '() => 6 * 7'), 42);
  assert.equal(await evaluate(h.client, '() => false'), false);
  assert.deepEqual(await evaluate(h.client, '() => [1, "two", [3]]'), [1, 'two', [3]]);
});

test('awaits a promise', async () => {
  const v = await evaluate(h.client, "async () => { const r = await fetch('/api/items'); return (await r.json()).items; }");
  assert.deepEqual(v, ['Apples', 'Bread', 'Cheese']);
});

test('runs on a target element', async () => {
  const ref = findRef(await snapshot(h.client), 'button', 'Save');
  assert.equal(await evaluate(h.client, '(el) => el.id', { target: ref }), 'save');
  assert.equal(await evaluate(h.client, '(el) => el.tagName', { target: '#country' }), 'SELECT');
});

test('an exception is an error carrying its message', async () => {
  const r = await callTool(h.client, 'browser_evaluate', { function: "() => { throw new Error('boom from the page'); }" });
  assert.equal(r.isError, true, dump(r));
  assert.match(textOf(r), /boom from the page/);
});

test('the page changes made by evaluate are visible afterwards', async () => {
  await ok(h.client, 'browser_evaluate', { function: "() => { document.title = 'Changed'; return document.title; }" });
  assert.equal(await evaluate(h.client, '() => document.title'), 'Changed');
  const r = await ok(h.client, 'browser_snapshot', {});
  assert.ok(!r.isError);
  assert.equal(sc(r).title ?? 'Changed', 'Changed');
});
