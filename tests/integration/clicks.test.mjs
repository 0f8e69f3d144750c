/*
 * Clicks: a covered element is not clicked and the error names what covers
 * it; a ref from before a re-render is stale; double, right and modified
 * clicks reach the page as such; a click waits for the request it started.
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, callTool, ok, sc, dump, evaluate, textContent, snapshot, findRef, assertToolError,
} from '../e2e/lib.mjs';

const h = useGlassbox();

test('a button under a transparent overlay is not clicked; the error names the overlay', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/overlay.html') });
  const snap = await snapshot(h.client);
  const save = findRef(snap, 'button', 'Save');
  const r = await callTool(h.client, 'browser_click', { target: save, element: 'Save' });
  const text = assertToolError(r, 'click on a covered button');
  assert.match(text, /cover/i, `the error says the button is covered: ${text}`);
  assert.match(text, /overlay/, `the error names the covering element: ${text}`);
  assert.equal(await textContent(h.client, '#status'), 'Not saved', 'the button did not act');
  assert.equal(await evaluate(h.client, '() => document.body.dataset.overlayClicks || "0"'), '0', 'the overlay was not clicked either');
});

test('a ref from before a re-render is stale: the error says to take a new snapshot', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/rerender.html') });
  const snap = await snapshot(h.client);
  const apples = findRef(snap, 'button', 'Pick Apples');
  const refresh = findRef(snap, 'button', 'Refresh list');
  await ok(h.client, 'browser_click', { target: refresh });
  assert.equal(await textContent(h.client, '#version'), 'Rendered 2 times');
  const r = await callTool(h.client, 'browser_click', { target: apples, element: 'Pick Apples' });
  const text = assertToolError(r, 'click on a stale ref');
  assert.match(text, new RegExp(`\\b${apples}\\b`), `the error names the ref: ${text}`);
  assert.match(text, /stale/i);
  assert.match(text, /new snapshot/i);
  // Playwright MCP's words first
  assert.match(text, new RegExp(`^Error: Ref ${apples} not found in the current page snapshot\\. Try capturing new snapshot\\.`, 'm'), text);
  assert.equal(await textContent(h.client, '#picked'), 'Nothing picked');
  // With a new snapshot the same button works.
  const fresh = await snapshot(h.client);
  await ok(h.client, 'browser_click', { target: findRef(fresh, 'button', 'Pick Apples') });
  assert.equal(await textContent(h.client, '#picked'), 'Picked Apples');
});

test('a ref that was never handed out is an error naming it', async () => {
  const r = await callTool(h.client, 'browser_click', { target: 'e99999' });
  const text = assertToolError(r, 'click on an unknown ref');
  assert.match(text, /e99999/);
});

test('a CSS selector works as a target', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  await ok(h.client, 'browser_click', { target: '#target' });
  assert.equal(await textContent(h.client, '#single'), 'Clicks: 1');
});

test('a selector that matches nothing is an error naming it', async () => {
  const r = await callTool(h.client, 'browser_click', { target: '#no-such-element' });
  const text = assertToolError(r, 'click on a missing selector');
  assert.match(text, /#no-such-element/);
});

test('double click', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  const ref = findRef(await snapshot(h.client), 'button', 'Click target');
  await ok(h.client, 'browser_click', { target: ref, doubleClick: true });
  assert.equal(await textContent(h.client, '#double'), 'Double clicks: 1');
  assert.equal(await textContent(h.client, '#context'), 'Context menus: 0');
});

test('right button opens the context menu', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  const ref = findRef(await snapshot(h.client), 'button', 'Click target');
  await ok(h.client, 'browser_click', { target: ref, button: 'right' });
  assert.equal(await textContent(h.client, '#context'), 'Context menus: 1');
  assert.equal(await textContent(h.client, '#last-button'), 'Last button: right');
  assert.equal(await textContent(h.client, '#single'), 'Clicks: 0', 'a right click is not a click');
});

test('middle button', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  await ok(h.client, 'browser_click', { target: '#target', button: 'middle' });
  assert.equal(await textContent(h.client, '#last-button'), 'Last button: middle');
});

test('a click with modifiers', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/clicks.html') });
  await ok(h.client, 'browser_click', { target: '#target', modifiers: ['Shift'] });
  assert.equal(await textContent(h.client, '#mods'), 'Modifiers: Shift');
  assert.equal(await textContent(h.client, '#single'), 'Clicks: 1');
});

test('a click waits for the slow request it started', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/slow.html') });
  const ref = findRef(await snapshot(h.client), 'button', 'Load report');
  const r = await ok(h.client, 'browser_click', { target: ref });
  const slow = (sc(r).responses || []).find((x) => x.url.includes('/api/slow'));
  assert.ok(slow, `the slow response is part of the click: ${dump(r)}`);
  assert.equal(slow.status, 200);
  // Right after the click returned, with no wait in between:
  assert.equal(await textContent(h.client, '#result'), 'Report ready after 800 ms');
});
