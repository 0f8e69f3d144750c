/*
 * The operation ledger seen from a client: operation_id is an idempotency
 * key. A finished operation repeated with its id returns the recorded
 * result without acting again; an approval-required call goes through
 * under the same id once approved; and an operation whose outcome is
 * unknown (Chromium killed in the middle of a click) is recorded
 * `unknown` and never clicked again.
 *
 * Policy: fixtures/policy/gates.json (the shipped risk rules on).
 */
import { test } from 'node:test';
import crypto from 'node:crypto';
import {
  assert, useGlassbox, callTool, ok, sc, dump, textOf, chromiumPids, pollUntil, assertToolError,
} from '../e2e/lib.mjs';
import { decide, seen, buttonRef, assertApprovalRequired } from './gates_helpers.mjs';

const h = useGlassbox();
const newId = (what) => `op-${what}-${crypto.randomBytes(6).toString('hex')}`;

async function open(page) {
  await ok(h.client, 'browser_navigate', { url: h.url(page) });
  h.fixture.reset();
}

async function pageText(selector) {
  const r = await ok(h.client, 'browser_evaluate', {
    function: `() => document.querySelector(${JSON.stringify(selector)}).textContent`,
  });
  return sc(r).result;
}

test('repeating a finished operation returns its recorded result; the site saw one request', async () => {
  await open('/gates/orders.html');
  const ref = await buttonRef(h.client, 'Save');
  const id = newId('save');
  const first = await ok(h.client, 'browser_click', { target: ref, operation_id: id });
  assert.equal(sc(first).operation_id, id, dump(first));
  assert.equal(seen(h.fixture, 'POST /api/save'), 1, JSON.stringify(h.fixture.hits()));
  assert.equal(await pageText('#status'), 'Saved orders');

  const again = await callTool(h.client, 'browser_click', { target: ref, operation_id: id });
  assert.deepEqual(again.structuredContent, first.structuredContent, 'the recorded result, as it was');
  assert.deepEqual(again.content, first.content);
  assert.equal(again.isError, first.isError);
  assert.equal(seen(h.fixture, 'POST /api/save'), 1, `still one request: ${JSON.stringify(h.fixture.hits())}`);

  // the same id for another call is a conflict, not a replay
  const other = await callTool(h.client, 'browser_click', { target: await buttonRef(h.client, 'Delete all orders'), operation_id: id });
  const text = assertToolError(other, 'another call under a used operation_id');
  assert.equal(sc(other).error?.code, 'operation_refused', dump(other));
  assert.ok(!sc(other).gate, `refused before the gate: ${dump(other)}`);
  assert.match(text, new RegExp(id), text);
  assert.equal(seen(h.fixture, 'POST /api/save'), 1);
  assert.equal(seen(h.fixture, 'POST /orders/delete'), 0);
});

test('an approval-required call goes through under its operation_id once approved, then replays', async () => {
  await open('/gates/orders.html');
  const ref = await buttonRef(h.client, 'Delete all orders');
  const id = newId('delete');
  const asked = await callTool(h.client, 'browser_click', { target: ref, operation_id: id });
  const g = assertApprovalRequired(asked);
  assert.equal(sc(asked).operation_id, id);
  await decide(h.gb.dataDir, 'approve', g.approval_id, ['--by', 'alice']);

  const done = await ok(h.client, 'browser_click', { target: ref, operation_id: id, approval: g.approval_id });
  assert.equal(sc(done).operation_id, id);
  assert.equal(seen(h.fixture, 'POST /orders/delete'), 1);

  // the client lost the answer and sends the call again: the recorded result, not a second delete
  const replay = await callTool(h.client, 'browser_click', { target: ref, operation_id: id, approval: g.approval_id });
  assert.deepEqual(replay.structuredContent, done.structuredContent, dump(replay));
  assert.equal(seen(h.fixture, 'POST /orders/delete'), 1, 'still exactly one delete');
});

test('Chromium killed mid-click: the outcome is unknown, and the repeat does not click again', async () => {
  await open('/gates/slow.html');
  const ref = await buttonRef(h.client, 'Build report');
  const id = newId('crash');
  const inFlight = callTool(h.client, 'browser_click', { target: ref, operation_id: id });

  // the page tells the server the click arrived, then blocks for ~3 s
  const arrived = await pollUntil(() => seen(h.fixture, 'POST /api/click') === 1, { deadlineMs: 15000, intervalMs: 20 });
  assert.ok(arrived, `the click reached the page: ${JSON.stringify(h.fixture.hits())}`);
  const pids = chromiumPids(h.gb.dataDir);
  assert.ok(pids.length > 0, 'Chromium runs under the data dir');
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }

  const r = await inFlight;
  const text = assertToolError(r, 'the click whose browser was killed');
  assert.equal(sc(r).operation_id, id);
  assert.equal(sc(r).error?.code, 'browser_crashed', dump(r));
  assert.match(text, /crash/i, text);
  assert.equal(sc(r).state, 'unknown', `recorded as unknown: ${dump(r)}`);

  const again = await callTool(h.client, 'browser_click', { target: ref, operation_id: id });
  const againText = assertToolError(again, 'repeating the unknown operation');
  assert.equal(sc(again).operation_id, id, dump(again));
  assert.equal(sc(again).state, 'unknown', dump(again));
  assert.match(againText, /outcome is unknown/i, againText);
  assert.match(againText, /not run again/i, againText);

  await new Promise((res) => setTimeout(res, 500));
  assert.equal(seen(h.fixture, 'POST /api/click'), 1, `the page saw one click, not two: ${JSON.stringify(h.fixture.hits())}`);

  // and the session goes on in a new browser
  const nav = await ok(h.client, 'browser_navigate', { url: h.url('/gates/slow.html') });
  assert.equal(sc(nav).title, 'Report', dump(nav));
  assert.equal(await pageText('#result'), 'No report yet');
  assert.equal(seen(h.fixture, 'POST /api/click'), 1);
});
