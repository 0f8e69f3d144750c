/*
 * The viewport of a session in isolation "context", with real Chromium
 * and the official MCP SDK client: the shared browser's windows are small
 * (their surfaces cost memory per session) and each tab's viewport is
 * emulated at the session's size, so everything a page, an agent or a
 * reviewer sees must be what a session of its own browser ("isolation":
 * "process") sees at that size: innerWidth and innerHeight, the visual
 * viewport, media queries, the device pixel ratio and the screen; the
 * screenshots (viewport and full page) and the evidence of an action;
 * an element's box; a click at a point near the bottom-right corner and a
 * click on an element there; browser_emulate's viewport and its reset; a
 * new tab. At the default 1280x720 and at a configured 800x600.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, openGlassbox, startFixtureServer, ok, sc, dump, imagesOf, pngSize, snapshot, findRef, chromiumPids, REPO_ROOT } from '../e2e/lib.mjs';

const LOOPBACK = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
const PAGE_HEIGHT = 2000; /* fixtures/site/viewport.html's body */
const CORNER = 24; /* its fixed button's side, at the bottom-right corner */

let fixture;
const cleanup = [];

after(async () => {
  for (const f of cleanup) await f();
  if (fixture) await fixture.close();
});

async function open(policy, args) {
  if (!fixture) fixture = await startFixtureServer();
  const dir = fs.mkdtempSync('/tmp/glassbox-viewport-');
  const cfg = path.join(dir, 'policy.json');
  fs.writeFileSync(cfg, JSON.stringify({ ...LOOPBACK, caps: ['vision'], ...policy }));
  const gb = await openGlassbox({ config: cfg, args });
  cleanup.push(async () => {
    await gb.close();
    gb.removeDataDir();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return gb;
}

async function evalIn(client, fn) {
  return sc(await ok(client, 'browser_evaluate', { function: fn })).result;
}

/* The PNG an evidence entry names, read back through the MCP resource. */
async function evidencePng(client, r) {
  const ev = (sc(r).evidence || []).find((e) => e.kind === 'screenshot') || (sc(r).evidence || [])[0];
  assert.ok(ev && ev.uri, `the call names its screenshot: ${dump(r)}`);
  const read = await client.readResource({ uri: ev.uri });
  return pngSize(Buffer.from(read.contents[0].blob, 'base64'));
}

/* What the page sees of its viewport, asked about a width w and height h. */
function pageView(w, h) {
  return `() => ({
    inner: [innerWidth, innerHeight],
    visual: [visualViewport.width, visualViewport.height, visualViewport.scale],
    client: [document.documentElement.clientWidth, document.documentElement.clientHeight],
    dpr: devicePixelRatio,
    screen: [screen.width, screen.height, screen.availWidth, screen.availHeight],
    media: ['(min-width: ${w}px)', '(max-width: ${w}px)', '(min-width: ${w + 1}px)',
      '(min-height: ${h}px)', '(max-height: ${h}px)', '(min-height: ${h + 1}px)',
      '(orientation: landscape)', '(orientation: portrait)', '(hover: hover)', '(pointer: fine)',
      '(resolution: 1dppx)'].map((q) => matchMedia(q).matches),
    outer: [outerWidth, outerHeight],
  })`;
}

/* Everything checked of one session at w x h; returns what the page saw
 * (compared between the modes by the caller). */
async function measure(gb, w, h) {
  const c = gb.client;
  const seen = {};
  const nav = await ok(c, 'browser_navigate', { url: fixture.url + '/viewport.html' });
  const browser = sc(nav).browser;
  seen.navigateEvidence = await evidencePng(c, nav);
  assert.deepEqual(seen.navigateEvidence, { width: w, height: h }, 'the navigate\'s evidence is the viewport');

  seen.view = await evalIn(c, pageView(w, h));
  assert.deepEqual(seen.view.inner, [w, h], `innerWidth x innerHeight: ${JSON.stringify(seen.view)}`);
  assert.deepEqual(seen.view.visual, [w, h, 1], JSON.stringify(seen.view));
  assert.deepEqual(seen.view.client, [w, h], JSON.stringify(seen.view));
  assert.deepEqual(seen.view.media.slice(0, 6), [true, true, false, true, true, false], JSON.stringify(seen.view));

  const shot = await ok(c, 'browser_take_screenshot', {});
  seen.shot = pngSize(imagesOf(shot)[0].data);
  assert.deepEqual(seen.shot, { width: w, height: h }, 'the viewport screenshot');
  assert.deepEqual(await evidencePng(c, shot), seen.shot, 'its evidence');
  const full = await ok(c, 'browser_take_screenshot', { fullPage: true });
  seen.full = await evidencePng(c, full);
  assert.deepEqual(seen.full, { width: w, height: PAGE_HEIGHT }, 'the full page screenshot');
  assert.deepEqual(await evalIn(c, '() => [innerWidth, innerHeight]'), [w, h], 'the viewport after the full page capture');

  seen.box = await evalIn(c, '() => { const r = document.getElementById("corner").getBoundingClientRect(); return [r.x, r.y, r.width, r.height]; }');
  assert.deepEqual(seen.box, [w - CORNER, h - CORNER, CORNER, CORNER], 'the corner button\'s box');

  // a click at a point 6 px from the bottom-right corner lands on the button there
  await ok(c, 'browser_mouse_click_xy', { x: w - 6, y: h - 6 });
  seen.clickAt = (await evalIn(c, '() => clicks')).at(-1);
  assert.deepEqual(seen.clickAt, { x: w - 6, y: h - 6, id: 'corner' }, 'the click at a point');
  // and a click on the element, at its box's centre
  const clicked = await ok(c, 'browser_click', { target: findRef(await snapshot(c), 'button', 'Corner') });
  seen.clickOn = (await evalIn(c, '() => clicks')).at(-1);
  assert.deepEqual(seen.clickOn, { x: w - CORNER / 2, y: h - CORNER / 2, id: 'corner' }, dump(clicked));
  assert.deepEqual(await evidencePng(c, clicked), { width: w, height: h }, 'the click\'s evidence');

  // browser_emulate's viewport, then its reset: back to the session's viewport
  await ok(c, 'browser_emulate', { viewport: { width: 600, height: 400 } });
  assert.deepEqual(await evalIn(c, '() => [innerWidth, innerHeight]'), [600, 400], 'the emulated viewport');
  await ok(c, 'browser_emulate', { viewport: null });
  seen.afterReset = await evalIn(c, '() => [innerWidth, innerHeight]');
  assert.deepEqual(seen.afterReset, [w, h], 'the viewport after browser_emulate\'s reset');
  const shotAfter = await ok(c, 'browser_take_screenshot', {});
  assert.deepEqual(pngSize(imagesOf(shotAfter)[0].data), { width: w, height: h }, 'the screenshot after the reset');

  // a new tab has the session's viewport too
  await ok(c, 'browser_tabs', { action: 'new' });
  await ok(c, 'browser_navigate', { url: fixture.url + '/viewport.html' });
  seen.newTab = await evalIn(c, '() => [innerWidth, innerHeight]');
  assert.deepEqual(seen.newTab, [w, h], 'a new tab\'s viewport');
  assert.deepEqual(pngSize(imagesOf(await ok(c, 'browser_take_screenshot', {}))[0].data), { width: w, height: h }, 'a new tab\'s screenshot');
  return { seen, browser };
}

/* The --window-size of the session's browser, from its command line. */
function windowSize(gb) {
  for (const pid of chromiumPids(gb.dataDir)) {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      const flag = args.find((a) => a.startsWith('--window-size='));
      if (flag && !args.some((a) => a.startsWith('--type='))) return flag.slice('--window-size='.length);
    } catch {
      /* gone meanwhile */
    }
  }
  return null;
}

for (const [w, h, args] of [[1280, 720, []], [800, 600, ['--viewport-size', '800x600']]]) {
  test(`at ${w}x${h}, a session in isolation "context" sees the viewport, screenshots, boxes and points of a session of its own browser`, async (t) => {
    const own = await open({}, args);
    const { seen: byProcess, browser: ownBrowser } = await measure(own, w, h);
    assert.equal(ownBrowser, 'launched');
    assert.equal(windowSize(own), `${w},${h}`, 'a browser of its own has a window of the viewport\'s size');
    await own.close();

    const shared = await open({ isolation: 'context' }, args);
    const { seen: byContext, browser: sharedBrowser } = await measure(shared, w, h);
    assert.equal(sharedBrowser, 'shared', 'a context of the shared browser');
    assert.equal(windowSize(shared), '320,200', 'the shared browser\'s windows are small');

    // the window's outer size is the one thing that differs (said in docs/isolation.md)
    t.diagnostic(`outerWidth x outerHeight: process ${byProcess.view.outer}, context ${byContext.view.outer}`);
    delete byProcess.view.outer;
    delete byContext.view.outer;
    assert.deepEqual(byContext, byProcess, 'the same page, pictures, boxes and points in both modes');
  });
}
