/*
 * Snapshots show what an agent needs to check its own work, in
 * Playwright's notation: the values of date, time, number and range
 * inputs (not Chromium's internal spinbuttons), [cursor=pointer] on
 * clickable generic elements, [active] on the focused element.
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, ok, sc, dump, snapshot, findRef, textContent, callTool, textOf,
} from '../e2e/lib.mjs';

const h = useGlassbox();

const snapText = async () => textOf(await ok(h.client, 'browser_snapshot', {}));

test('date, time, number and range inputs show their values, not their inner spinbuttons', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  for (const [id, v] of [['date', '2024-05-31'], ['time', '14:30'], ['number', '42'], ['range', '75'], ['datetime', '2024-05-31T14:30'], ['month', '2024-05'], ['week', '2024-W22']])
    await ok(h.client, 'browser_type', { target: `#${id}`, text: v });
  const t = await snapText();
  assert.match(t, /- textbox "Start date" \[ref=e\d+\]: 2024-05-31\n/, t);
  assert.match(t, /- textbox "Start time" \[ref=e\d+\]: 14:30\n/, t);
  assert.match(t, /- textbox "Meeting" \[ref=e\d+\]: 2024-05-31T14:30\n/, t);
  assert.match(t, /- textbox "Month" \[ref=e\d+\]: 2024-05\n/, t);
  assert.match(t, /- textbox "Week" \[ref=e\d+\]: 2024-W22\n/, t);
  assert.match(t, /- spinbutton "Guests" \[ref=e\d+\]: "42"\n/, t);
  assert.match(t, /- slider "Volume" \[ref=e\d+\]: "75"\n/, t);
  assert.doesNotMatch(t, /spinbutton "(Month|Day|Year|Hours|Minutes)/, 'no internal spinbuttons');
});

test('the ref of a date input from the snapshot takes a typed date', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  const ref = findRef(await snapshot(h.client), 'textbox', 'Start date');
  const r = await ok(h.client, 'browser_type', { target: ref, text: '2025-01-15' });
  assert.equal(sc(r).value, '2025-01-15', dump(r));
  assert.match(await snapText(), /- textbox "Start date" \[ref=e\d+\]: 2025-01-15\n/);
});

test('clickable generic elements are marked [cursor=pointer], once, and can be clicked by that ref', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/snapshot-marks.html') });
  const t = await snapText();
  assert.match(t, /- generic \[ref=(e\d+)\] \[cursor=pointer\]: Plan A for teams\n/, t);
  assert.match(t, /- generic \[ref=e\d+\] \[cursor=pointer\]: Plan B\n/, t);
  assert.match(t, /- generic \[ref=e\d+\]: Not clickable\n/, t);
  assert.match(t, /- button "A button" \[ref=e\d+\]\n/, 'a button is not marked: it is a control anyway');
  assert.equal((t.match(/\[cursor=pointer\]/g) || []).length, 2, `only where the pointer starts, not on what inherits it: ${t}`);
  const ref = t.match(/- generic \[ref=(e\d+)\] \[cursor=pointer\]: Plan B/)[1];
  await ok(h.client, 'browser_click', { target: ref });
  assert.equal(await textContent(h.client, '#picked'), 'Picked B');
});

test('the focused element is [active]', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/snapshot-marks.html') });
  let t = await snapText();
  /* nothing focused yet: the body is the active element, as Playwright shows it */
  assert.match(t, /^- generic \[active\] \[ref=e1\]:/m, `nothing focused yet: ${t}`);
  assert.equal((t.match(/\[active\]/g) || []).length, 1, t);
  await ok(h.client, 'browser_click', { target: '#search' });
  t = await snapText();
  assert.match(t, /- textbox "Search" \[active\] \[ref=e\d+\]/, t);
  assert.equal((t.match(/\[active\]/g) || []).length, 1, t);
});
