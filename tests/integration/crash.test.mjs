/*
 * A browser that dies under the service: the next call says the browser
 * crashed; the call after that runs in a new browser.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, dump, evaluate, chromiumPids, pollUntil, assertToolError } from '../e2e/lib.mjs';

const h = useGlassbox();
let oldPids;

test('the browser runs under the data dir', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  oldPids = chromiumPids(h.gb.dataDir);
  assert.ok(oldPids.length > 0, `Chromium processes whose command line names ${h.gb.dataDir} expected`);
});

test('kill -9 the browser: the next call says it crashed', async () => {
  for (const pid of oldPids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  const gone = await pollUntil(() => oldPids.every((p) => !chromiumPids(h.gb.dataDir).includes(p)));
  assert.ok(gone, 'the killed processes are gone');
  const r = await callTool(h.client, 'browser_snapshot', {});
  const text = assertToolError(r, 'the call after the crash');
  assert.match(text, /crash/i, `the error says the browser crashed: ${text}`);
  assert.match(text, /new browser|next call/i, `the error says what happens next: ${text}`);
});

test('the call after that works in a new browser', async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/second.html') });
  assert.equal(sc(r).title, 'Second page', dump(r));
  assert.equal(await evaluate(h.client, '() => document.title'), 'Second page');
  const now = chromiumPids(h.gb.dataDir);
  assert.ok(now.length > 0, 'a new browser runs');
  assert.ok(now.every((p) => !oldPids.includes(p)), 'it is a new browser, not the old one');
});

test('a crash while the page is busy does not wedge the session', async () => {
  // Kill again, this time with a call in flight.
  const pending = callTool(h.client, 'browser_wait_for', { text: 'this text never appears', time: 30 });
  await new Promise((r) => setTimeout(r, 300));
  for (const pid of chromiumPids(h.gb.dataDir)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }
  const r = await pending;
  assert.equal(r.isError, true, dump(r));
  assert.match(r.content[0].text, /crash/i);
  const again = await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  assert.equal(sc(again).title, 'Account settings');
});
