/*
 * browser_take_screenshot: the viewport, the full page, one element; every
 * one a valid PNG, also stored as evidence.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, sc, dump, imagesOf, isPng, pngSize, sha256 } from '../e2e/lib.mjs';

const h = useGlassbox();
let viewport;

function onePng(r) {
  const imgs = imagesOf(r);
  assert.equal(imgs.length, 1, dump(r));
  assert.equal(imgs[0].mimeType, 'image/png');
  assert.ok(isPng(imgs[0].data));
  return imgs[0].data;
}

test('a viewport screenshot', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/long.html') });
  const png = onePng(await ok(h.client, 'browser_take_screenshot', {}));
  viewport = pngSize(png);
  assert.ok(viewport.width > 0 && viewport.height > 0);
});

test('fullPage is taller than the viewport and covers the whole page', async () => {
  const r = await ok(h.client, 'browser_take_screenshot', { fullPage: true });
  const size = pngSize(onePng(r));
  const pageHeight = (
    await ok(h.client, 'browser_evaluate', { function: '() => document.documentElement.scrollHeight' })
  ).structuredContent.result;
  assert.ok(size.height > viewport.height, `full page ${size.height} px, viewport ${viewport.height} px`);
  assert.ok(size.height >= pageHeight * 0.9, `full page ${size.height} px for a ${pageHeight} px page`);
  assert.equal(size.width, viewport.width);
});

test('an element screenshot is the size of the element', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const png = onePng(await ok(h.client, 'browser_take_screenshot', { target: '#save' }));
  const size = pngSize(png);
  assert.ok(size.width < viewport.width / 2 && size.height < viewport.height / 2, JSON.stringify(size));
});

test('the screenshot is stored as evidence with its hash', async () => {
  const r = await ok(h.client, 'browser_take_screenshot', {});
  const png = onePng(r);
  const ev = sc(r).evidence || [];
  const stored = ev.find((e) => e.sha256 === sha256(png));
  assert.ok(stored, `the inline PNG is the stored one: ${dump(r)}`);
  assert.equal(stored.size, png.length);
});
