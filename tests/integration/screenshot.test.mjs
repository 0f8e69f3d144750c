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

test('fullPage is taller than the viewport and covers the whole page; the image returned is fitted for a model', async () => {
  const r = await ok(h.client, 'browser_take_screenshot', { fullPage: true });
  const pageHeight = (
    await ok(h.client, 'browser_evaluate', { function: '() => document.documentElement.scrollHeight' })
  ).structuredContent.result;
  /* the evidence keeps the whole page */
  const ev = sc(r).evidence.find((e) => e.kind === 'screenshot') || sc(r).evidence[0];
  const read = await h.client.readResource({ uri: ev.uri });
  const whole = pngSize(Buffer.from(read.contents[0].blob, 'base64'));
  assert.ok(whole.height > viewport.height, `full page ${whole.height} px, viewport ${viewport.height} px`);
  assert.ok(whole.height >= pageHeight * 0.9, `full page ${whole.height} px for a ${pageHeight} px page`);
  assert.equal(whole.width, viewport.width);
  /* the inline one: at most 1568 px a side and 1.15 megapixels, the same picture shrunk */
  const shown = pngSize(onePng(r));
  assert.ok(shown.height <= 1568 && shown.width * shown.height <= 1.15 * 1024 * 1024, JSON.stringify(shown));
  assert.equal(shown.height, 1568, `the longer side is fitted: ${JSON.stringify(shown)} of ${JSON.stringify(whole)}`);
  assert.equal(shown.width, Math.floor((whole.width * 1568) / whole.height), JSON.stringify({ shown, whole }));
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
