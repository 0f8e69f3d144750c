/*
 * JavaScript dialogs: an opened dialog is reported, other tools say one is
 * open, and browser_handle_dialog answers it (accept, dismiss, prompt text).
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, callTool, ok, sc, textOf, dump, textContent, snapshot, findRef,
} from '../e2e/lib.mjs';

const h = useGlassbox();
let refs;

/* The dialog a result reports as still open or as having opened. */
function reportedDialog(r) {
  const s = sc(r);
  return s.dialog_open || (s.dialogs || [])[0];
}

test('a confirm() that opens is reported in the click result', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/dialogs.html') });
  const snap = await snapshot(h.client);
  refs = {
    del: findRef(snap, 'button', 'Delete item'),
    notify: findRef(snap, 'button', 'Show notice'),
    ask: findRef(snap, 'button', 'Ask name'),
  };
  const r = await callTool(h.client, 'browser_click', { target: refs.del });
  const s = sc(r);
  assert.ok(s.dialog_open, `dialog_open expected: ${dump(r)}`);
  assert.equal(s.dialog_open.type, 'confirm');
  assert.equal(s.dialog_open.message, 'Delete this item?');
  assert.match(textOf(r), /Delete this item\?/, 'the model is told what the dialog asks');
});

test('while the dialog is open, other tools say so', async () => {
  const r = await callTool(h.client, 'browser_click', { target: refs.notify });
  assert.match(textOf(r), /dialog/i, `the result mentions the open dialog: ${dump(r)}`);
  assert.ok(r.isError || sc(r).dialog_open, `the click cannot proceed silently: ${dump(r)}`);
  assert.equal(sc(r).dialog_open?.type ?? 'confirm', 'confirm');
});

test('handle_dialog accept: the page sees "confirmed"', async () => {
  const r = await ok(h.client, 'browser_handle_dialog', { accept: true });
  assert.ok(!sc(r).dialog_open, `no dialog left open: ${dump(r)}`);
  assert.equal(await textContent(h.client, '#confirm-result'), 'confirmed');
});

test('handle_dialog dismiss: the page sees "cancelled"', async () => {
  const r = await callTool(h.client, 'browser_click', { target: refs.del });
  assert.equal(reportedDialog(r)?.type, 'confirm', dump(r));
  await ok(h.client, 'browser_handle_dialog', { accept: false });
  assert.equal(await textContent(h.client, '#confirm-result'), 'cancelled');
});

test('an alert is reported and closed', async () => {
  const r = await callTool(h.client, 'browser_click', { target: refs.notify });
  const d = reportedDialog(r);
  assert.equal(d?.type, 'alert', dump(r));
  assert.equal(d.message, 'Saved successfully');
  await ok(h.client, 'browser_handle_dialog', { accept: true });
  assert.equal(await textContent(h.client, '#alert-result'), 'notice closed');
});

test('a prompt is answered with promptText', async () => {
  const r = await callTool(h.client, 'browser_click', { target: refs.ask });
  const d = reportedDialog(r);
  assert.equal(d?.type, 'prompt', dump(r));
  assert.equal(d.message, 'What is your name?');
  await ok(h.client, 'browser_handle_dialog', { accept: true, promptText: 'Grace' });
  assert.equal(await textContent(h.client, '#prompt-result'), 'Hello, Grace');
});

test('handle_dialog with no dialog open is an error', async () => {
  const r = await callTool(h.client, 'browser_handle_dialog', { accept: true });
  assert.equal(r.isError, true, dump(r));
  assert.match(textOf(r), /dialog/i);
});
