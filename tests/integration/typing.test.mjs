/*
 * Typing: the value is re-read after typing; a typed password never shows
 * up in a result, in the logs or in any file under the data dir; submit and
 * press_key reach the page.
 */
import { test } from 'node:test';
import crypto from 'node:crypto';
import {
  assert, useGlassbox, callTool, ok, sc, textOf, dump, evaluate, snapshot, findRef, filesContaining,
} from '../e2e/lib.mjs';

const h = useGlassbox();
// Unique per run so that a hit cannot come from anything but this test.
const SECRET = `pw-${crypto.randomBytes(9).toString('hex')}`;
const results = [];
const keep = (r) => {
  results.push(r);
  return r;
};

test('typing into a textbox: the value is re-read', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const snap = await snapshot(h.client);
  const name = findRef(snap, 'textbox', 'Name');
  const r = keep(await ok(h.client, 'browser_type', { target: name, element: 'Name', text: 'Grace Hopper' }));
  assert.equal(sc(r).value, 'Grace Hopper');
  assert.equal(await evaluate(h.client, "() => document.getElementById('name').value"), 'Grace Hopper');
});

test('typing again replaces the value rather than appending', async () => {
  const r = keep(await ok(h.client, 'browser_type', { target: '#name', text: 'Ada' }));
  assert.equal(sc(r).value, 'Ada');
  assert.equal(await evaluate(h.client, "() => document.getElementById('name').value"), 'Ada');
});

test('typing slowly fires a key event per character typed', async () => {
  await evaluate(h.client, "() => { window.__keys = 0; document.getElementById('name').addEventListener('keydown', (ev) => { if (ev.key.length === 1) window.__keys++; }); return true; }");
  const r = keep(await ok(h.client, 'browser_type', { target: '#name', text: 'Alan', slowly: true }));
  assert.equal(sc(r).value, 'Alan');
  assert.equal(await evaluate(h.client, '() => window.__keys'), 4);
});

test('a password is typed, masked in the result, and saved by the page', async () => {
  const snap = await snapshot(h.client);
  const pw = findRef(snap, 'textbox', 'Password');
  const r = keep(await ok(h.client, 'browser_type', { target: pw, element: 'Password', text: SECRET }));
  assert.notEqual(sc(r).value, SECRET);
  assert.equal(sc(r).value, '••••');
  // The page has it (typing worked) ...
  assert.equal(await evaluate(h.client, "() => document.getElementById('password').value.length"), SECRET.length);
  // ... and submits it.
  const save = findRef(snap, 'button', 'Save');
  keep(await ok(h.client, 'browser_click', { target: save }));
  assert.equal(await evaluate(h.client, "() => document.getElementById('status').textContent"), 'Saved: Alan');
  keep(await ok(h.client, 'browser_snapshot', {}));
  keep(await ok(h.client, 'browser_take_screenshot', {}));
});

test('the password appears in no result, no log line and no file under the data dir', async () => {
  for (const r of results) {
    const whole = JSON.stringify(r);
    assert.ok(!whole.includes(SECRET), `a result carries the password: ${dump(r)}`);
  }
  assert.ok(!h.gb.stderr().includes(SECRET), 'the server log carries the password');
  // While the browser is still running (its profile is under run/) ...
  assert.deepEqual(filesContaining(h.gb.dataDir, SECRET), [], 'files under the data dir hold the password in clear');
});

test('the password is in no file after the session ends either', async () => {
  await h.gb.close();
  assert.ok(!h.gb.stderr().includes(SECRET), 'the server log carries the password');
  assert.deepEqual(filesContaining(h.gb.dataDir, SECRET), [], 'files under the data dir hold the password in clear');
});
