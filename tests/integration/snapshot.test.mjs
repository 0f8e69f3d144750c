/*
 * browser_snapshot: maxChars cuts a long page with a marker; a target
 * gives a subtree; values of fields are shown.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, snapshot, findRef } from '../e2e/lib.mjs';

const h = useGlassbox();
let full;

test('a long page in full', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/long.html') });
  full = await snapshot(h.client);
  assert.match(full.text, /Archive note 1"/);
  assert.match(full.text, /Archive note 100"/);
  assert.match(full.text, /End of the release notes/);
  assert.doesNotMatch(full.text, /truncated/);
  assert.ok(full.text.length > 4000, `the full snapshot is long (${full.text.length} chars)`);
});

test('maxChars cuts the snapshot and says so', async () => {
  const cut = await snapshot(h.client, { maxChars: 2000 });
  assert.match(cut.text, /truncated/i, 'a marker says the snapshot was cut');
  assert.ok(cut.text.length < full.text.length, 'the cut snapshot is shorter');
  assert.ok(cut.text.length < 2000 + 600, `about maxChars long, not ${cut.text.length}`);
  assert.match(cut.text, /Release notes/, 'it keeps the start of the page');
  assert.doesNotMatch(cut.text, /Archive note 100"/, 'it drops the end of the page');
  // Refs of the part that was shown still work.
  const first = findRef(cut, 'button', 'Archive note 1');
  await ok(h.client, 'browser_hover', { target: first });
});

test('a target gives the subtree under it', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const whole = await snapshot(h.client);
  const sub = await snapshot(h.client, { target: '#settings' });
  assert.match(sub.text, /Name/);
  assert.match(sub.text, /"Save"/);
  assert.doesNotMatch(sub.text, /Go to the second page/, 'the link outside the form is not in the subtree');
  assert.ok(sub.text.length < whole.text.length);
});

test('typed values show in the snapshot', async () => {
  await ok(h.client, 'browser_type', { target: '#name', text: 'Ada' });
  const snap = await snapshot(h.client);
  const line = snap.nodes.find((n) => n.role === 'textbox' && n.name === 'Name').line;
  assert.match(line, /: Ada$/, `the textbox shows its value: ${line}`);
  assert.ok(snap.nodes.some((n) => n.role === 'heading' && n.name === 'Account settings') || /heading "Account settings"/.test(snap.text));
});
