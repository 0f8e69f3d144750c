/*
 * The vision group (coordinate mouse tools): off by default (absent from
 * tools/list, refused if called), on with the config key "caps". A
 * coordinate click is gated on the element found at the point and its
 * landing is read back, like any click.
 */
import { test, before, after } from 'node:test';
import { assert, callTool, ok, sc, dump, evaluate, textContent, assertToolError, openGlassbox, startFixtureServer } from '../e2e/lib.mjs';
import { useGlassboxWith, writePolicy, seen, centreOf } from './interact_helpers.mjs';

const VISION = ['browser_mouse_click_xy', 'browser_mouse_move_xy', 'browser_mouse_drag_xy',
  'browser_mouse_down', 'browser_mouse_up', 'browser_mouse_wheel'];

/* the shipped risk rules on, vision on */
const h = useGlassboxWith('gates', { caps: ['vision'] });
const offPolicy = writePolicy('loopback');
let denied = null;
before(async () => {
  denied = await startFixtureServer();
});
after(async () => {
  if (denied) await denied.close();
});

test('without the group the vision tools are not listed and refused if called', async () => {
  const gb = await openGlassbox({ config: offPolicy });
  try {
    const names = (await gb.client.listTools()).tools.map((t) => t.name);
    for (const n of VISION) assert.ok(!names.includes(n), `${n} is off: ${names}`);
    assert.ok(names.includes('browser_fill_form'), 'the core tools are there');
    const r = await callTool(gb.client, 'browser_mouse_click_xy', { x: 10, y: 10 });
    const text = assertToolError(r, 'a tool of a group that is off');
    assert.match(text, /vision/);
    assert.match(text, /caps/);
  } finally {
    await gb.close();
    gb.removeDataDir();
  }
});

test('with "caps": ["vision"] they are listed', async () => {
  const names = (await h.client.listTools()).tools.map((t) => t.name);
  for (const n of VISION) assert.ok(names.includes(n), `${n} is on: ${names}`);
  assert.ok(!names.includes('browser_verify_value'), 'testing stays off');
});

test('a click at a point: the button there got it, the landing was read back', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/vision.html') });
  const p = await centreOf(evaluate, h.client, '#count');
  const r = await ok(h.client, 'browser_mouse_click_xy', { x: p.x, y: p.y });
  assert.equal(sc(r).landed, 'on target', dump(r));
  assert.match(r.content[0].text, /Count/, 'the text names what was clicked');
  assert.equal(await textContent(h.client, '#clicks'), 'clicks: 1');
  await ok(h.client, 'browser_mouse_click_xy', { x: p.x, y: p.y, clickCount: 2 });
  assert.equal(await textContent(h.client, '#clicks'), 'clicks: 3', 'a double click is two clicks');
});

test('move, down and up at the mouse position, wheel', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/vision.html') });
  const hover = await centreOf(evaluate, h.client, '#hover-me');
  await ok(h.client, 'browser_mouse_move_xy', { x: hover.x, y: hover.y });
  assert.equal(await textContent(h.client, '#hovered'), 'hovered');
  const pad = await centreOf(evaluate, h.client, '#pad');
  await ok(h.client, 'browser_mouse_move_xy', { x: pad.x, y: pad.y });
  const down = await ok(h.client, 'browser_mouse_down', {});
  assert.equal(sc(down).landed, 'on target', dump(down));
  await ok(h.client, 'browser_mouse_up', {});
  assert.equal(await textContent(h.client, '#pad-log'), 'pad: down(0) up(0)');
  const w = await ok(h.client, 'browser_mouse_wheel', { deltaX: 0, deltaY: 400 });
  const y = await evaluate(h.client, '() => window.scrollY');
  assert.ok(y > 0, `the page scrolled: ${y}`);
  assert.equal(sc(w).scroll?.y, y, dump(w));
});

test('drag_xy moves the knob onto the pin area, in steps', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/drag.html') });
  const a = await centreOf(evaluate, h.client, '#knob');
  const b = await centreOf(evaluate, h.client, '#pin');
  const r = await ok(h.client, 'browser_mouse_drag_xy', { startX: a.x, startY: a.y, endX: b.x, endY: b.y });
  assert.match(await textContent(h.client, '#knob-status'), /^knob pinned after \d+ moves$/, dump(r));
});

test('down, move, up: a drag in steps of its own; the release elsewhere is no click', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/drag.html') });
  const a = await centreOf(evaluate, h.client, '#knob');
  const b = await centreOf(evaluate, h.client, '#pin');
  await ok(h.client, 'browser_mouse_move_xy', { x: a.x, y: a.y });
  await ok(h.client, 'browser_mouse_down', {});
  await ok(h.client, 'browser_mouse_move_xy', { x: (a.x + b.x) / 2, y: (a.y + b.y) / 2 });
  await ok(h.client, 'browser_mouse_move_xy', { x: b.x, y: b.y });
  await ok(h.client, 'browser_mouse_up', {});
  assert.equal(await textContent(h.client, '#knob-status'), 'knob pinned after 2 moves');
});

test('a click at the point of "Delete all orders" needs approval; nothing is sent', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/gates/orders.html') });
  h.fixture.reset();
  const p = await centreOf(evaluate, h.client, '#delete-all');
  const r = await callTool(h.client, 'browser_mouse_click_xy', { x: p.x, y: p.y });
  assertToolError(r, 'a coordinate click on Delete all');
  assert.equal(sc(r).error?.code, 'approval_required', dump(r));
  assert.match(sc(r).gate?.summary || '', /Delete all orders/, dump(r));
  assert.equal(seen(h.fixture, 'POST /orders/delete'), 0, JSON.stringify(h.fixture.hits()));
});

test('points outside the viewport are refused with what to do', async () => {
  const r = await callTool(h.client, 'browser_mouse_click_xy', { x: -5, y: 10 });
  assert.match(assertToolError(r), /viewport|x/);
});

test('egress drill: a coordinate click on a link to a denied host reaches it zero times', async () => {
  denied.reset();
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/vision.html') });
  await evaluate(h.client, `() => { const a = document.createElement('a'); a.id = 'away'; a.textContent = 'Elsewhere';
    a.href = 'http://evil.test:${denied.port}/landing'; a.style = 'position:absolute; left:40px; top:240px; width:120px; height:30px; display:block';
    document.body.appendChild(a); }`);
  const p = await centreOf(evaluate, h.client, '#away');
  const r = await callTool(h.client, 'browser_mouse_click_xy', { x: p.x, y: p.y });
  assert.deepEqual(denied.hits().paths, {}, `the denied host saw nothing: ${JSON.stringify(denied.hits())}`);
  assert.ok(JSON.stringify(sc(r).blocked || []).includes('evil.test'), `the refusal is reported: ${dump(r)}`);
});
