/*
 * What glassbox re-reads to judge an action comes from its own isolated
 * world, never from the page's: a page that redefines document.title,
 * innerText, textContent, outerHTML, an input's value or setTimeout in its
 * own JavaScript world (fixtures/site/verify/lying-page.html) cannot make
 * an expectation pass, hide a change of its DOM or stall the settling.
 * Whether the DOM changed is a count of its mutations kept in that world,
 * so a script's change is seen whenever it happens.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, dump, textOf, verdictOf } from '../e2e/lib.mjs';

const h = useGlassbox();
const LYING = '/verify/lying-page.html';

test('a title and a text the page pretends to have fail their expectations, with what the DOM holds', async () => {
  const r = await callTool(h.client, 'browser_navigate', {
    url: h.url(LYING),
    expect: { title: 'Payment complete', text: 'order is confirmed' },
  });
  assert.equal(r.isError, true, dump(r));
  assert.equal(verdictOf(r, 'title').ok, false);
  assert.equal(verdictOf(r, 'title').observed, 'Payment failed');
  assert.equal(verdictOf(r, 'text').ok, false);
  assert.equal(sc(r).title, 'Payment failed', dump(r));
  // the page's own world does say what it pretends: the lie is real
  const said = await ok(h.client, 'browser_evaluate', { function: '() => [document.title, document.body.innerText]' });
  assert.deepEqual(sc(said).result, ['Payment complete', 'Thank you, your order is confirmed']);
});

test('the texts the page really shows pass', async () => {
  await ok(h.client, 'browser_navigate', {
    url: h.url(LYING),
    expect: { title: 'Payment failed', text: 'Your card was declined.' },
  });
});

test('a value the page pretends its field holds fails expect.value', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url(LYING) });
  const r = await callTool(h.client, 'browser_click', { target: '#noop', expect: { target: '#amount', value: '1000' } });
  assert.equal(r.isError, true, dump(r));
  assert.equal(verdictOf(r, 'value').observed, '0', dump(r));
});

test('a change of the DOM is seen though outerHTML lies, and no change is no change', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url(LYING) });
  const grew = await ok(h.client, 'browser_click', { target: '#grow' });
  assert.equal(sc(grew).dom_changed, true, dump(grew));
  assert.match(textOf(grew), /page changed/);
  const same = await ok(h.client, 'browser_click', { target: '#noop' });
  assert.equal(sc(same).dom_changed, false, dump(same));
});

test('a page that stops its own timers does not stall the settling', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url(LYING) });
  const r = await ok(h.client, 'browser_click', { target: '#noop' });
  assert.equal(sc(r).settle_timeout, undefined, `settling ended on its round trip, not at its bound: ${dump(r)}`);
});

test('browser_wait_for does not take text the page only pretends to show', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url(LYING) });
  const r = await callTool(h.client, 'browser_wait_for', { text: 'order is confirmed', time: 1 });
  assert.equal(r.isError, true, dump(r));
  await ok(h.client, 'browser_wait_for', { text: 'Your card was declined.' });
});

test('a script that changes the page after it awaited is seen to change it', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  // the re-read sent behind the script runs before the script ends: it must not be taken
  const late = await ok(h.client, 'browser_evaluate', {
    function: `async () => { await new Promise((r) => setTimeout(r, 80)); document.getElementById('status').textContent = 'changed late'; return 1; }`,
  });
  assert.equal(sc(late).dom_changed, true, dump(late));
  const at_once = await ok(h.client, 'browser_evaluate', { function: `() => { document.getElementById('status').textContent = 'changed at once'; return 2; }` });
  assert.equal(sc(at_once).dom_changed, true, dump(at_once));
  const queued = await ok(h.client, 'browser_evaluate', { function: `() => { setTimeout(() => { document.getElementById('status').textContent = 'changed by a task'; }, 0); return 3; }` });
  assert.equal(sc(queued).dom_changed, true, `a task the script queued ran before the re-read: ${dump(queued)}`);
  const read = await ok(h.client, 'browser_evaluate', { function: '() => document.title' });
  assert.equal(sc(read).dom_changed, false, dump(read));
  assert.equal(sc(read).evidence?.[0]?.unchanged, true, `an unchanged page keeps the last screenshot: ${dump(read)}`);
});

test('a text or CSS locator finds the element the DOM holds, not the one the page points it at', async () => {
  for (const target of ['text="Checkout"', '#checkout']) {
    await ok(h.client, 'browser_navigate', { url: h.url('/verify/lying-locator.html') });
    await ok(h.client, 'browser_click', { target });
    const out = await ok(h.client, 'browser_evaluate', { function: "() => document.getElementById('out').textContent" });
    assert.equal(sc(out).result, 'checked out', `${target} clicked the Checkout button: ${dump(out)}`);
  }
});
