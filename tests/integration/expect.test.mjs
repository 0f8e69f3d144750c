/*
 * expect: checks the caller states with the action; each one yields a
 * verdict with what was observed; a failing one makes the result an error
 * (the action itself still happened).
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, textOf, dump, textContent, verdictOf } from '../e2e/lib.mjs';

const h = useGlassbox();

test('passing expectations: each yields an ok verdict with the observed value', async () => {
  const r = await ok(h.client, 'browser_navigate', {
    url: h.url('/form.html'),
    expect: { title: 'Account settings', urlContains: '/form.html' },
  });
  const t = verdictOf(r, 'title');
  assert.equal(t.ok, true);
  assert.equal(t.expected, 'Account settings');
  assert.equal(t.observed, 'Account settings');
  assert.equal(verdictOf(r, 'urlContains').ok, true);

  await ok(h.client, 'browser_type', { target: '#name', text: 'Ada', expect: { value: 'Ada' } });
  const c = await ok(h.client, 'browser_click', {
    target: '#save',
    expect: { text: 'Saved: Ada', textGone: 'Not saved yet', response: { url: '/api/save', status: 200 } },
  });
  for (const check of ['text', 'textGone', 'response']) assert.equal(verdictOf(c, check).ok, true, dump(c));
});

test('a failing expectation: isError, with expected and observed', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  await ok(h.client, 'browser_type', { target: '#name', text: 'Ada' });
  const r = await callTool(h.client, 'browser_click', { target: '#save', expect: { text: 'Saved: Bob' } });
  assert.equal(r.isError, true, dump(r));
  assert.equal(sc(r).ok, false);
  const v = verdictOf(r, 'text');
  assert.equal(v.ok, false);
  assert.equal(v.expected, 'Saved: Bob');
  assert.ok(v.observed !== undefined && v.observed !== 'Saved: Bob', dump(r));
  assert.match(textOf(r), /Saved: Bob/, 'the model is told which expectation failed');
  // The click itself did happen; only the expectation failed.
  assert.equal(await textContent(h.client, '#status'), 'Saved: Ada');
  assert.equal(h.fixture.hits().requests['POST /api/save'] >= 1, true);
});

test('a failing title expectation reports the title it saw', async () => {
  const r = await callTool(h.client, 'browser_navigate', { url: h.url('/second.html'), expect: { title: 'Third page' } });
  assert.equal(r.isError, true, dump(r));
  const v = verdictOf(r, 'title');
  assert.equal(v.ok, false);
  assert.equal(v.expected, 'Third page');
  assert.equal(v.observed, 'Second page');
});

test('a failing response expectation reports what was seen', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const r = await callTool(h.client, 'browser_click', { target: '#save', expect: { response: { url: '/api/save', status: 201 } } });
  assert.equal(r.isError, true, dump(r));
  const v = verdictOf(r, 'response');
  assert.equal(v.ok, false);
  assert.match(JSON.stringify(v.observed), /200/, dump(r));
});

test('an expect with an unknown key is an error naming it, and nothing runs', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const before = h.fixture.hits().requests['POST /api/save'] || 0;
  const r = await callTool(h.client, 'browser_click', { target: '#save', expect: { colour: 'blue' } });
  assert.equal(r.isError, true, dump(r));
  assert.match(textOf(r), /colour/);
  assert.equal(h.fixture.hits().requests['POST /api/save'] || 0, before, 'the click did not run');
});
