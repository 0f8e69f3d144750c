/*
 * browser_resize (the viewport re-read), browser_emulate_media (media
 * features re-read with matchMedia) and browser_find (text or regex ->
 * elements with refs that the next call can use).
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, dump, evaluate, textContent, assertToolError, openGlassbox } from '../e2e/lib.mjs';
import { writePolicy } from './interact_helpers.mjs';

const h = useGlassbox();
const holdOther = writePolicy('loopback', { risk: { rules: [{ name: 'no-layout-changes', decision: 'forbid', when: { kind: 'other' } }] } });

test('resize: the page sees the new viewport', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/media.html') });
  const r = await ok(h.client, 'browser_resize', { width: 800, height: 500 });
  assert.deepEqual(sc(r).viewport, { width: 800, height: 500 }, dump(r));
  assert.deepEqual(await evaluate(h.client, '() => [innerWidth, innerHeight]'), [800, 500]);
  for (const bad of [{ width: 0, height: 500 }, { width: 800 }, { width: 100000, height: 500 }]) {
    const e = await callTool(h.client, 'browser_resize', bad);
    assert.equal(e.isError, true, dump(e));
  }
  await ok(h.client, 'browser_resize', { width: 1280, height: 720 });
});

test('emulate_media: dark scheme and print, read back with matchMedia; null clears', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/media.html') });
  const r = await ok(h.client, 'browser_emulate_media', { colorScheme: 'dark', reducedMotion: 'reduce' });
  assert.equal(sc(r).media?.colorScheme, 'dark', dump(r));
  assert.equal(await evaluate(h.client, "() => matchMedia('(prefers-color-scheme: dark)').matches"), true);
  assert.equal(await evaluate(h.client, "() => matchMedia('(prefers-reduced-motion: reduce)').matches"), true);
  assert.equal(await evaluate(h.client, '() => getComputedStyle(document.body).backgroundColor'), 'rgb(17, 17, 17)');
  await ok(h.client, 'browser_emulate_media', { media: 'print' });
  assert.equal(await evaluate(h.client, "() => matchMedia('print').matches"), true);
  assert.equal(await evaluate(h.client, "() => matchMedia('(prefers-color-scheme: dark)').matches"), true, 'left unchanged');
  await ok(h.client, 'browser_emulate_media', { colorScheme: null, media: null, reducedMotion: null });
  assert.equal(await evaluate(h.client, "() => matchMedia('(prefers-color-scheme: dark)').matches"), false);
  assert.equal(await evaluate(h.client, "() => matchMedia('print').matches"), false);
  assertToolError(await callTool(h.client, 'browser_emulate_media', {}));
  assertToolError(await callTool(h.client, 'browser_emulate_media', { colorScheme: 'purple' }));
});

test('find: text and regex give refs the next call can use', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/find.html') });
  const r = await ok(h.client, 'browser_find', { text: 'green pear' });
  const matches = sc(r).matches || [];
  const button = matches.find((m) => m.role === 'button');
  assert.ok(button && button.ref, `a button with a ref: ${dump(r)}`);
  assert.equal(button.name, 'Add green pear');
  await ok(h.client, 'browser_click', { target: button.ref });
  assert.equal(await evaluate(h.client, "() => [...document.querySelectorAll('button')].map((b) => b.textContent).join()"),
    'Add red apple,Added,Add blue plum');

  const re = await ok(h.client, 'browser_find', { regex: '/ord-\\d{4}-\\d+/i' });
  assert.ok((sc(re).matches || []).some((m) => m.role === 'paragraph' && m.ref && /ORD-2024-0042/.test(m.line)), dump(re));
  const none = await ok(h.client, 'browser_find', { text: 'durian' });
  assert.equal((sc(none).matches || []).length, 0);
  assert.match(none.content[0].text, /No matches/);
  assertToolError(await callTool(h.client, 'browser_find', {}));
  assertToolError(await callTool(h.client, 'browser_find', { text: 'a', regex: 'a' }));
  assertToolError(await callTool(h.client, 'browser_find', { regex: '(' }));
});

test('gate: a tenant rule on kind "other" refuses resize and emulate_media; the page is unchanged', async () => {
  const gb = await openGlassbox({ config: holdOther });
  try {
    await ok(gb.client, 'browser_navigate', { url: h.url('/interact/media.html') });
    const before = await evaluate(gb.client, '() => [innerWidth, innerHeight]');
    const r = await callTool(gb.client, 'browser_resize', { width: 640, height: 480 });
    assertToolError(r, 'a forbidden resize');
    assert.equal(sc(r).error?.code, 'forbidden', dump(r));
    assert.deepEqual(await evaluate(gb.client, '() => [innerWidth, innerHeight]'), before);
    const m = await callTool(gb.client, 'browser_emulate_media', { colorScheme: 'dark' });
    assert.equal(sc(m).error?.code, 'forbidden', dump(m));
    assert.equal(await evaluate(gb.client, "() => matchMedia('(prefers-color-scheme: dark)').matches"), false);
  } finally {
    await gb.close();
    gb.removeDataDir();
  }
});
