/*
 * Refs resolved ahead, through real Chromium and the MCP SDK client: once
 * an answer with a new snapshot has left, the objects of the refs a
 * person could act on are asked for, and the next action on one takes
 * them instead of resolving the ref again (seen in the debug log's CDP
 * lines). What was asked ahead is used only while it still stands: a ref
 * whose element left, or whose page moved on to another document, fails
 * as stale and nothing is clicked.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, sc, textOf } from '../e2e/lib.mjs';
import { callLogged } from './cdp_log_helpers.mjs';

const h = useGlassbox({ options: () => ({ env: { GLASSBOX_LOG: 'debug' } }) });

/* The ref of the button named name in a snapshot text. */
function buttonRef(text, name) {
  const ref = new RegExp(`button "${name}"[^\\n]*\\[ref=(e\\d+)\\]`).exec(text)?.[1];
  assert.ok(ref, `no button "${name}" in\n${text}`);
  return ref;
}

/* An agent's think time after an answer: what is asked ahead after it is
 * sent by then, and not taken for the next call's own work in the log. */
const THINK_MS = 200;

/* Clicks target after the think time; the result and the CDP methods the
 * call sent. */
async function clickLogged(target) {
  await new Promise((r) => setTimeout(r, THINK_MS));
  return callLogged(h, 'browser_click', { target });
}

/* Opens clicks.html after one click on it (glassbox's isolated world is
 * known from then on, in every new document); the button's ref in a
 * snapshot of the new document. */
async function open() {
  const first = await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  await ok(h.client, 'browser_click', { target: buttonRef(textOf(first), 'Click target') });
  await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  return buttonRef(textOf(await ok(h.client, 'browser_snapshot', {})), 'Click target');
}

async function clicks() {
  const r = await ok(h.client, 'browser_evaluate', { function: "() => document.getElementById('single').textContent" });
  return sc(r).result;
}

test('the next click on a ref of the snapshot takes its objects asked for ahead', async () => {
  const ref = await open();
  const { r, methods } = await clickLogged(ref);
  assert.equal(r.isError, undefined, textOf(r));
  assert.equal(sc(r).ok, true);
  assert.ok(!methods.includes('DOM.resolveNode'), `resolved again: ${methods.join(' ')}`);
  assert.ok(methods.includes('Input.dispatchMouseEvent'), methods.join(' '));
  assert.equal(await clicks(), 'Clicks: 1');
  /* the click's own answer snapshot has the same ref: asked for again, clicked again */
  const again = await clickLogged(ref);
  assert.equal(sc(again.r).ok, true, textOf(again.r));
  assert.ok(!again.methods.includes('DOM.resolveNode'), `resolved again: ${again.methods.join(' ')}`);
  assert.equal(await clicks(), 'Clicks: 2');
});

/* Runs fn in the page after this call's answer (and the refs asked for
 * after it), then waits until it ran. */
async function later(fn) {
  await ok(h.client, 'browser_evaluate', { function: `() => { setTimeout(${fn}, 150); }` });
  await new Promise((r) => setTimeout(r, 600));
}

test('a ref whose element left after the snapshot is stale, though its object was asked for ahead', async () => {
  const ref = await open();
  /* a copy in its place, with the same name: not what the ref named */
  await later("() => { const t = document.getElementById('target'); const c = t.cloneNode(true); c.onclick = () => { document.getElementById('single').textContent = 'Clicks: copy'; }; t.replaceWith(c); }");
  const { r, methods } = await clickLogged(ref);
  assert.ok(!methods.includes('DOM.resolveNode'), `the object asked ahead was taken: ${methods.join(' ')}`);
  assert.equal(r.isError, true, textOf(r));
  assert.equal(sc(r).error.code, 'stale_ref', textOf(r));
  assert.equal(await clicks(), 'Clicks: 0');
});

test('a ref of a document the page has left is stale: nothing asked ahead is used', async () => {
  const ref = await open();
  /* the page reloads itself: a new document, same URL, same button */
  await later('() => location.reload()');
  const { r } = await clickLogged(ref);
  assert.equal(r.isError, true, textOf(r));
  assert.equal(sc(r).error.code, 'stale_ref', textOf(r));
  assert.equal(await clicks(), 'Clicks: 0');
});
