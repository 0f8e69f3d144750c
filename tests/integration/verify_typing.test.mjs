/*
 * Verification of typed values: date, time, datetime-local, month, week,
 * number, range and color inputs take a value in their own format (set as
 * a user's choice would, with input and change), a value in another
 * format is refused before anything changes, naming the format; a value
 * that does not stick is ok: false with error.code "value_not_set",
 * expected and observed; contenteditable elements and <select> likewise.
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, callTool, ok, sc, dump, evaluate, assertToolError,
} from '../e2e/lib.mjs';

const h = useGlassbox();

const value = (id) => evaluate(h.client, `() => document.getElementById(${JSON.stringify(id)}).value`);

const CASES = [
  ['date', '2024-05-31'],
  ['time', '14:30'],
  ['datetime', '2024-05-31T14:30'],
  ['month', '2024-05'],
  ['week', '2024-W22'],
  ['number', '42'],
  ['range', '75'],
  ['color', '#1a2b3c'],
];

test('every input type takes a value in its own format, re-read, with the input and change events', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  for (const [id, v] of CASES) {
    const r = await callTool(h.client, 'browser_type', { target: `#${id}`, text: v });
    assert.ok(!r.isError, `#${id} takes ${v}: ${dump(r)}`);
    assert.equal(sc(r).value, v, `the value re-read is the one asked: ${dump(r)}`);
    assert.equal(await value(id), v, `the page holds it: #${id}`);
  }
  const seen = await evaluate(h.client, '() => window.eventsSeen()');
  for (const [id] of CASES) {
    assert.ok(seen[id].input >= 1, `#${id} got an input event: ${JSON.stringify(seen[id])}`);
    if (id !== 'number') assert.ok(seen[id].change >= 1, `#${id} got a change event: ${JSON.stringify(seen[id])}`);
  }
});

test('a value the browser writes back in its canonical form is not a failure', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  // zero seconds and fractions: kept or dropped as the browser likes, the same time
  let r = await ok(h.client, 'browser_type', { target: '#time', text: '14:30:00.000' });
  assert.match(sc(r).value, /^14:30(:00(\.000)?)?$/, dump(r));
  r = await ok(h.client, 'browser_type', { target: '#datetime', text: '2024-05-31T09:15:00.000' });
  assert.match(sc(r).value, /^2024-05-31T09:15(:00(\.000)?)?$/, dump(r));
  r = await ok(h.client, 'browser_type', { target: '#color', text: '#1A2B3C' });
  assert.equal(sc(r).value, '#1a2b3c', dump(r));
});

test('a value in the wrong format is refused up front, naming the format, and the field is unchanged', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  const wrong = [
    ['date', '31/05/2024', /date inputs take YYYY-MM-DD/],
    ['time', '2:30 PM', /time inputs take HH:MM/],
    ['datetime', '2024-05-31 14:30', /datetime-local inputs take YYYY-MM-DDTHH:MM/],
    ['month', 'May 2024', /month inputs take YYYY-MM/],
    ['week', '2024-22', /week inputs take YYYY-Www/],
    ['number', 'forty-two', /number inputs take a number/],
    ['range', 'loud', /range inputs take a number/],
    ['color', 'red', /color inputs take #rrggbb/],
  ];
  for (const [id, v, says] of wrong) {
    const before = await value(id);
    const r = await callTool(h.client, 'browser_type', { target: `#${id}`, text: v });
    const text = assertToolError(r, `#${id} given ${v}`);
    assert.equal(sc(r).error.code, 'bad_value_format', dump(r));
    assert.match(text, says, text);
    assert.equal(await value(id), before, `#${id} is unchanged`);
  }
});

test('a value that does not stick is value_not_set, with expected and observed', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  // a date in the right form that is no date: the input sanitizes it away
  let r = await callTool(h.client, 'browser_type', { target: '#date', text: '2024-02-30' });
  let text = assertToolError(r, 'an impossible date');
  assert.equal(sc(r).error.code, 'value_not_set', dump(r));
  assert.equal(sc(r).expected, '2024-02-30');
  assert.equal(sc(r).observed, '');
  assert.match(text, /not "2024-02-30"/, text);
  // above the range's max: the input clamps it
  r = await callTool(h.client, 'browser_type', { target: '#range', text: '150' });
  assertToolError(r, 'a range value above max');
  assert.equal(sc(r).error.code, 'value_not_set', dump(r));
  assert.equal(sc(r).observed, '100', dump(r));
  // maxlength keeps three characters
  r = await callTool(h.client, 'browser_type', { target: '#code', text: 'ABCDE' });
  assertToolError(r, 'text longer than maxlength');
  assert.equal(sc(r).error.code, 'value_not_set', dump(r));
  assert.equal(sc(r).expected, 'ABCDE');
  assert.equal(sc(r).observed, 'ABC');
  // the page rewrites what was typed
  r = await callTool(h.client, 'browser_type', { target: '#upper', text: 'quiet' });
  assertToolError(r, 'a field the page rewrites');
  assert.equal(sc(r).observed, 'QUIET', dump(r));
  // and a value that sticks is ok
  await ok(h.client, 'browser_type', { target: '#code', text: 'XYZ' });
});

test('contenteditable: typed text is re-read; text the page puts back is value_not_set', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  const r = await ok(h.client, 'browser_type', { target: '#notes', text: 'Call Ada at noon' });
  assert.equal(sc(r).value, 'Call Ada at noon', dump(r));
  assert.equal(await evaluate(h.client, '() => document.getElementById("notes").innerText'), 'Call Ada at noon');
  const bad = await callTool(h.client, 'browser_type', { target: '#stubborn', text: 'changed' });
  assertToolError(bad, 'an editable block that puts its text back');
  assert.equal(sc(bad).error.code, 'value_not_set', dump(bad));
  assert.equal(sc(bad).observed, 'fixed');
});

test('select: the selection is re-read after the page handled it', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/verify/inputs.html') });
  const r = await ok(h.client, 'browser_select_option', { target: '#size', values: ['Large'] });
  assert.equal(sc(r).value, 'l', dump(r));
  const bad = await callTool(h.client, 'browser_select_option', { target: '#locked', values: ['m'] });
  const text = assertToolError(bad, 'a select that changes itself back');
  assert.equal(sc(bad).error.code, 'value_not_set', dump(bad));
  assert.deepEqual(sc(bad).expected, ['m']);
  assert.deepEqual(sc(bad).observed, ['s']);
  assert.match(text, /not \["m"\]/, text);
  assert.equal(await value('locked'), 's');
});
