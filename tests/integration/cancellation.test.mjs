/*
 * Cancellation: notifications/cancelled (sent by the SDK when the caller's
 * AbortSignal fires) stops a long call, and the server goes on serving.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, evaluate } from '../e2e/lib.mjs';

const h = useGlassbox();

test('a long wait_for is cancelled and the next call runs at once', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const ac = new AbortController();
  const pending = callTool(h.client, 'browser_wait_for', { text: 'this text never appears', time: 30 }, { signal: ac.signal });
  // Let the request reach the server and start waiting, then cancel it.
  await new Promise((r) => setTimeout(r, 500));
  ac.abort('the user changed their mind');
  await assert.rejects(pending, (err) => {
    assert.match(String(err?.message ?? err), /abort|cancel|changed their mind/i);
    return true;
  });
  // If the server kept waiting, this call would queue behind the 30 s wait;
  // the request timeout below turns that into a failure.
  const title = sc(
    await ok(h.client, 'browser_evaluate', { function: '() => document.title' }, { timeout: 15000 }),
  ).result;
  assert.equal(title, 'Account settings');
});

test('cancelling one call leaves the session usable for actions', async () => {
  const ac = new AbortController();
  const pending = callTool(h.client, 'browser_wait_for', { textGone: 'Account settings', time: 30 }, { signal: ac.signal });
  await new Promise((r) => setTimeout(r, 300));
  ac.abort();
  await assert.rejects(pending);
  await ok(h.client, 'browser_type', { target: '#name', text: 'Still here' }, { timeout: 15000 });
  await ok(h.client, 'browser_click', { target: '#save' }, { timeout: 15000 });
  assert.equal(await evaluate(h.client, "() => document.getElementById('status').textContent"), 'Saved: Still here');
});

test('the server still answers protocol requests', async () => {
  const { tools } = await h.client.listTools();
  assert.ok(tools.length > 0);
  await h.client.ping();
});
