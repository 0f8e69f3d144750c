/*
 * A click whose handler leaves the page shortly after (Playwright MCP's
 * "racy navigation destroys context"), with real Chromium and the MCP SDK
 * client: the click landed and is reported done, never with an unknown
 * outcome; its evidence screenshot is of the document the page went to
 * (the request to the torn-down one is dropped at the navigation instead
 * of waiting for the call's deadline), and the page gets there. When the
 * navigation commits (before the answer or after it, on a loaded machine)
 * is the browser's timing, so the page is read until it shows it.
 * The delays sweep the window in which the screenshot is asked of the
 * old document while it is being replaced.
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, callTool, sc, dump, snapshot, findRef, textOf, ok, isPng,
} from '../e2e/lib.mjs';
import { artifactBytes } from './verify_helpers.mjs';

const h = useGlassbox();

async function clickAndLeave(ms, to) {
  const q = `ms=${ms}${to ? `&to=${encodeURIComponent(to)}` : ''}`;
  await ok(h.client, 'browser_navigate', { url: h.url(`/verify/leaves-soon.html?${q}`) });
  const button = findRef(await snapshot(h.client), 'button', 'Submit');
  return callTool(h.client, 'browser_click', { element: 'Submit button', target: button });
}

/* The page's snapshot once its URL matches re (read again for up to 10 s:
 * the handler's timer fires on the browser's clock). */
async function pageOnceAt(re) {
  const until = Date.now() + 10000;
  for (;;) {
    const text = textOf(await ok(h.client, 'browser_snapshot', {}));
    if (re.test(text) || Date.now() > until) return text;
    await new Promise((r) => setTimeout(r, 100));
  }
}

/* The click is done, not unknown, and its evidence is a stored screenshot. */
async function assertLandedWithEvidence(r, what) {
  assert.ok(!r.isError, `${what}: ${dump(r)}`);
  assert.equal(sc(r).ok, true, `${what}: ${dump(r)}`);
  assert.doesNotMatch(textOf(r), /outcome is unknown/, what);
  assert.equal(sc(r).evidence_error, undefined, `${what}: ${dump(r)}`);
  const shot = (sc(r).evidence || []).find((e) => e.kind === 'screenshot');
  assert.ok(shot, `${what}: a screenshot is linked: ${dump(r)}`);
  if (shot.sha256) assert.ok(isPng(await artifactBytes(h.gb.dataDir, shot.sha256)), `${what}: the evidence is a PNG`);
}

test('a click whose handler navigates to about:blank soon after is done, with evidence, and the page gets there', async () => {
  for (const ms of [0, 5, 10, 15, 20, 25, 30, 40, 50, 75, 100]) {
    const r = await clickAndLeave(ms);
    await assertLandedWithEvidence(r, `navigating ${ms} ms after the click`);
    const answer = textOf(r);
    assert.match(answer, /Clicked button "Submit"/, answer);
    // the page goes where the click took it
    const page = await pageOnceAt(/Page URL: about:blank/);
    assert.match(page, /Page URL: about:blank/, `after ${ms} ms: ${page}`);
  }
});

test('a click whose handler navigates to another page of the site soon after is done, with evidence', async () => {
  for (const ms of [0, 20, 50]) {
    const r = await clickAndLeave(ms, h.url('/second.html'));
    await assertLandedWithEvidence(r, `navigating to /second.html ${ms} ms after the click`);
    const page = await pageOnceAt(/Page URL: .*\/second\.html/);
    assert.match(page, /Page URL: .*\/second\.html/, page);
  }
});
