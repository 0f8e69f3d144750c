/*
 * Verification of clicks: the click point is the centre of one of the
 * element's boxes (a link that wraps onto two lines is clicked, not
 * reported covered); an element moved by timers is clicked once it rests,
 * or the result says the click missed; every click reads back where the
 * trusted event landed, and a miss is ok: false with error.code "missed",
 * naming what it hit, with the annotated screenshot showing both.
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, callTool, ok, sc, dump, evaluate, textContent, snapshot, findRef, assertToolError,
} from '../e2e/lib.mjs';
import { recordOf, artifactBytes, decodePng, outlinePixels, cpuHog } from './verify_helpers.mjs';

const h = useGlassbox();
const CRIMSON = [0xe0, 0x1b, 0x5a];
const AZURE = [0x00, 0xa0, 0xff];

test('a link that wraps onto two lines is clicked, not reported covered by its parent', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/wrapped-link.html') });
  const facts = await evaluate(h.client, '() => window.layoutFacts()');
  assert.ok(facts.lines >= 2, `the fixture's link wraps: ${JSON.stringify(facts)}`);
  assert.equal(facts.centreOnLink, false, 'the centre of its bounding box is not on the link (the case to handle)');
  const link = findRef(await snapshot(h.client), 'link', 'property details');
  const r = await callTool(h.client, 'browser_click', { target: link });
  assert.ok(!r.isError, `the wrapped link is clicked: ${dump(r)}`);
  assert.equal(sc(r).ok, true);
  assert.equal(sc(r).landed, 'on target', `the landing was read back: ${dump(r)}`);
  assert.equal(await textContent(h.client, '#status'), 'Details opened', "the link's own listener saw the click");
  assert.equal(await textContent(h.client, '#div-clicks'), 'Div clicks: 0', 'the div around it did not get the click');
});

test('a button that steps aside when the pointer arrives: missed, naming what was hit, both in the evidence', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/moving.html') });
  const shifty = findRef(await snapshot(h.client), 'button', 'Shifty');
  const before = await evaluate(h.client, '() => { const r = document.getElementById("shifty").getBoundingClientRect(); return { x: r.left, y: r.top, width: r.width, height: r.height }; }');
  const r = await callTool(h.client, 'browser_click', { target: shifty });
  const text = assertToolError(r, 'a click whose press lands beside the button');
  assert.equal(sc(r).error.code, 'missed', dump(r));
  assert.match(text, /div#filler/, `the error names what the click hit: ${text}`);
  assert.match(text, /Shifty/, `and what it was meant for: ${text}`);
  assert.equal(sc(r).landed.on.startsWith('div#filler'), true, dump(r));
  const counts = await evaluate(h.client, '() => window.clickCounts()');
  assert.equal(counts.shifty, 0, 'the button did not get the click');
  assert.equal(counts.filler, 1, 'the text behind it did (as the result says)');

  // The annotated screenshot outlines the button where it was meant to be
  // clicked (crimson) and what the click hit (azure).
  const rec = await recordOf(h.gb.dataDir, sc(r).operation_id);
  assert.ok(rec.body.element.hit_box, `the record has the box of what was hit: ${JSON.stringify(rec.body.element)}`);
  const annotated = (rec.artifacts || []).find((a) => /annotated/.test(a.kind));
  assert.ok(annotated, `an annotated screenshot: ${JSON.stringify(rec.artifacts)}`);
  const img = decodePng(await artifactBytes(h.gb.dataDir, annotated.sha256));
  assert.ok(outlinePixels(img, before, CRIMSON) > 100, 'the target box is outlined');
  const [hx, hy, hw, hh] = rec.body.element.hit_box;
  assert.ok(outlinePixels(img, { x: hx, y: hy, width: hw, height: hh }, AZURE) > 100, 'the box of what was hit is outlined');
});

test('a button that steps aside on the press: the click went elsewhere, missed, and nothing says it was clicked', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/moving.html') });
  const dodger = findRef(await snapshot(h.client), 'button', 'Dodger');
  const r = await callTool(h.client, 'browser_click', { target: dodger });
  const text = assertToolError(r, 'a click whose release lands beside the button');
  assert.equal(sc(r).error.code, 'missed', dump(r));
  assert.match(text, /the press at \(\d+, \d+\) landed on .*Dodger.*, but the click went to div#stage/, text);
  assert.doesNotMatch(text, /Clicked /, `no line says the button was clicked: ${text}`);
  assert.equal(sc(r).landed.on.startsWith('div#stage'), true, dump(r));
  assert.equal(await evaluate(h.client, '() => window.dodgerClicks'), 0, 'the button did not get the click');
});

test('a button slid down by a timer (no CSS animation) is clicked where it comes to rest', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/moving.html') });
  const slider = findRef(await snapshot(h.client), 'button', 'Slider');
  let landed = 0;
  for (let i = 0; i < 3; i++) {
    const before = await evaluate(h.client, '() => window.clickCounts()');
    const anims = await evaluate(h.client, '() => { window.slide(700); return document.getAnimations().length; }');
    assert.equal(anims, 0, 'the motion is by timer only');
    const r = await callTool(h.client, 'browser_click', { target: slider });
    const after = await evaluate(h.client, '() => window.clickCounts()');
    const seen = after.slider - before.slider;
    if (sc(r).ok) {
      assert.equal(seen, 1, `ok: true, so the slider's own listener saw the click: ${dump(r)}`);
      landed++;
    } else {
      assert.ok(['missed', 'not_stable'].includes(sc(r).error.code), dump(r));
      assert.equal(seen, 0, `ok: false, so the slider did not get the click: ${dump(r)}`);
    }
  }
  assert.ok(landed >= 1, 'the click waits for the slide to end and lands at least once of three');
});

test('under a CPU hog, a button jumping by timers is clicked or reported missed, never ok elsewhere', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/moving.html') });
  const jumper = findRef(await snapshot(h.client), 'button', 'Jumper');
  const stop = cpuHog(1, 40000);
  const codes = {};
  try {
    await evaluate(h.client, '() => { window.jump(40000); window.jank(40000); return true; }');
    for (let i = 0; i < 12; i++) {
      const before = await evaluate(h.client, '() => window.clickCounts()');
      const r = await callTool(h.client, 'browser_click', { target: jumper });
      const after = await evaluate(h.client, '() => window.clickCounts()');
      const seen = after.jumper - before.jumper;
      const code = sc(r).ok ? 'ok' : sc(r).error.code;
      codes[code] = (codes[code] || 0) + 1;
      if (sc(r).ok) assert.equal(seen, 1, `ok: true only when the jumper's own listener saw the click: ${dump(r)}`);
      else {
        // covered: it jumped under its neighbour at the moment of the check
        assert.ok(['missed', 'not_stable', 'covered'].includes(code), dump(r));
        assert.equal(seen, 0, `a click reported failed did not reach the jumper: ${dump(r)}`);
      }
    }
  } finally {
    stop();
  }
  process.stderr.write(`jumper outcomes: ${JSON.stringify(codes)}\n`);
});
