/*
 * browser_drag: a real mouse drag from one element to another, with the
 * moves in between; an HTML5 drag the page starts is carried with drag
 * events. The verdict is what the drop target saw, re-read from the page.
 * Gate: a tenant rule on drags refuses one before the mouse moves.
 */
import { test, before, after } from 'node:test';
import { assert, callTool, ok, sc, dump, evaluate, textContent, snapshot, findRef, assertToolError, startFixtureServer } from '../e2e/lib.mjs';
import { useGlassboxWith } from './interact_helpers.mjs';

const h = useGlassboxWith('loopback', {
  risk: { rules: [{ name: 'no-archive-drag', decision: 'forbid', when: { kind: 'drag', text_matches: ['Card B'] } }] },
});

let denied = null;
before(async () => {
  denied = await startFixtureServer();
});
after(async () => {
  if (denied) await denied.close();
});

test('an HTML5 drag of a card onto Done: the drop target saw the drop', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/drag.html') });
  const snap = await snapshot(h.client);
  const r = await ok(h.client, 'browser_drag', {
    startElement: 'Card A', startTarget: '#card-a', endElement: 'Done', endTarget: '#done',
  });
  assert.equal(sc(r).drop?.kind, 'html5', dump(r));
  assert.equal(sc(r).drop?.seen, true, dump(r));
  assert.equal(await textContent(h.client, '#status'), 'dropped Card A on Done');
  assert.equal(await evaluate(h.client, "() => document.getElementById('card-a').parentElement.id"), 'done');
  assert.ok(snap.text.length > 0);
});

test('a drop target that does not accept the drop: the call fails and says so', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/drag.html') });
  const r = await callTool(h.client, 'browser_drag', { startTarget: '#card-a', endTarget: '#locked' });
  const text = assertToolError(r, 'dropping on Locked');
  assert.equal(sc(r).error?.code, 'not_dropped', dump(r));
  assert.match(text, /did not take the drop/, text);
  assert.equal(await evaluate(h.client, "() => document.getElementById('card-a').parentElement.id"), 'todo');
  assert.equal(await textContent(h.client, '#status'), 'nothing dropped');
});

test('a pointer-driven drag with refs: moves in between, released over the pin area', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/drag.html') });
  const snap = await snapshot(h.client);
  const knob = findRef(snap, 'button', 'Knob');
  const r = await ok(h.client, 'browser_drag', { startTarget: knob, endTarget: '#pin' });
  assert.equal(sc(r).drop?.kind, 'pointer', dump(r));
  const status = await textContent(h.client, '#knob-status');
  const m = /^knob pinned after (\d+) moves$/.exec(status);
  assert.ok(m, `the page saw the release over the pin area: ${status}`);
  assert.ok(Number(m[1]) > 2, `the mouse moved in steps: ${status}`);
});

test('a drag the tenant forbids is refused before the mouse moves', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/drag.html') });
  await evaluate(h.client, "() => { document.getElementById('card-a').textContent = 'Card B'; }");
  const r = await callTool(h.client, 'browser_drag', { startTarget: '#card-a', endTarget: '#done' });
  assertToolError(r, 'a forbidden drag');
  assert.equal(sc(r).error?.code, 'forbidden', dump(r));
  assert.equal(await evaluate(h.client, "() => document.getElementById('card-a').parentElement.id"), 'todo');
  assert.equal(await textContent(h.client, '#status'), 'nothing dropped');
});

test('bad targets are precise errors, and the session keeps serving', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/drag.html') });
  const missing = await callTool(h.client, 'browser_drag', { startTarget: '#card-a' });
  assert.equal(missing.isError, true, dump(missing));
  assert.match(assertToolError(missing), /endTarget/);
  const nowhere = await callTool(h.client, 'browser_drag', { startTarget: '#card-a', endTarget: '#no-such' });
  assert.equal(sc(nowhere).error?.code, 'no_match', dump(nowhere));
  await ok(h.client, 'browser_drag', { startTarget: '#card-a', endTarget: '#done' });
});

test('egress drill: a drop whose handler reports to a denied host reaches it zero times', async () => {
  denied.reset();
  const report = `http://evil.test:${denied.port}/dropped`;
  await ok(h.client, 'browser_navigate', { url: h.url(`/interact/drag.html?report=${encodeURIComponent(report)}`) });
  const r = await ok(h.client, 'browser_drag', { startTarget: '#card-a', endTarget: '#done' });
  assert.equal(await textContent(h.client, '#status'), 'dropped Card A on Done', 'the drop happened');
  assert.deepEqual(denied.hits().paths, {}, `the denied host saw nothing: ${JSON.stringify(denied.hits())}`);
  assert.ok(JSON.stringify(sc(r).blocked || []).includes('evil.test'), `the refusal is reported: ${dump(r)}`);
});
