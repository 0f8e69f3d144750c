/*
 * Gates: a destructive click waits for a person. The call is not run; the
 * result carries the approval (id, summary, fingerprint, expiry); a person
 * approves or denies it with `glassbox approvals`; the repeat with
 * "approval" runs exactly that action once; every decision is in the
 * audit log with who made it.
 *
 * Policy: fixtures/policy/gates.json (the shipped risk rules on).
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, dump, textOf, pollUntil } from '../e2e/lib.mjs';
import {
  approvals, decide, defaultDecider, seen, buttonRef, assertApprovalRequired, assertApprovalRefused,
  auditRecords, TTL_SECONDS,
} from './gates_helpers.mjs';

const h = useGlassbox();
const DELETE = 'POST /orders/delete';
/* approvals decided in the tests below, for the audit log's check: by -> {gate, operation} */
const decisions = {};

async function openOrders() {
  await ok(h.client, 'browser_navigate', { url: h.url('/gates/orders.html') });
  h.fixture.reset();
}

test('Delete all orders needs approval: nothing is sent, the result says what would happen', async () => {
  await openOrders();
  const ref = await buttonRef(h.client, 'Delete all orders');
  const before = Date.now();
  const r = await callTool(h.client, 'browser_click', { target: ref });
  const g = assertApprovalRequired(r, 'clicking Delete all orders');

  assert.equal(seen(h.fixture, DELETE), 0, `the site saw no delete: ${JSON.stringify(h.fixture.hits())}`);
  assert.equal(await textOrNull('#orders tr:nth-child(2) td'), '#1041', 'the page is as it was');

  assert.match(g.summary, /^click button "Delete all orders" on http:\/\/127\.0\.0\.1:\d+\/gates\/orders\.html/, dump(r));
  assert.ok(g.summary.includes('POST /orders/delete'), `the summary names the request: ${g.summary}`);
  assert.equal(g.rule, 'destructive-click', dump(r));
  const expires = Date.parse(g.expires_at);
  assert.ok(expires > before && expires <= Date.now() + TTL_SECONDS * 1000 + 1000,
    `expires within the ttl (${TTL_SECONDS} s): ${g.expires_at}`);

  const text = textOf(r);
  assert.ok(text.includes(g.approval_id), `the text names the approval: ${text}`);
  assert.ok(text.includes('POST /orders/delete'), `the text says what would happen: ${text}`);
  assert.match(text, /approval/i, text);

  const list = await approvals(h.gb.dataDir, ['list']);
  assert.equal(list.code, 0, list.stderr);
  assert.ok(list.stdout.includes(g.approval_id), `listed as waiting: ${list.stdout}`);
  assert.ok(list.stdout.includes('"Delete all orders"') && list.stdout.includes('POST /orders/delete'),
    `the person reads the same summary: ${list.stdout}`);
  assert.match(list.stdout, new RegExp(`${g.approval_id}\\s+pending`), list.stdout);
});

test('approved through the CLI: the repeat with the approval runs once; the id cannot be used again', async () => {
  await openOrders();
  const ref = await buttonRef(h.client, 'Delete all orders');
  const asked = await callTool(h.client, 'browser_click', { target: ref });
  const g = assertApprovalRequired(asked);
  decisions[defaultDecider()] = { gate: g, operation: sc(asked).operation_id };

  // still pending: the approval is refused and not spent
  assertApprovalRefused(await callTool(h.client, 'browser_click', { target: ref, approval: g.approval_id }), 'pending');
  assert.equal(seen(h.fixture, DELETE), 0);

  const out = await decide(h.gb.dataDir, 'approve', g.approval_id);
  assert.ok(out.includes(g.approval_id) && out.includes('Delete all orders'), out);

  const r = await ok(h.client, 'browser_click', { target: ref, approval: g.approval_id });
  assert.equal(seen(h.fixture, DELETE), 1, `exactly one delete: ${JSON.stringify(h.fixture.hits())}`);
  assert.equal(sc(r).approval?.id, g.approval_id, dump(r));
  assert.equal(sc(r).approval?.by, defaultDecider(), dump(r));
  assert.ok((sc(r).responses || []).some((x) => x.method === 'POST' && x.url.endsWith('/orders/delete') && x.status === 204),
    `the result shows the request: ${dump(r)}`);

  // the same approval again, on exactly the same action
  const again = await callTool(h.client, 'browser_click', { target: ref, approval: g.approval_id });
  const g2 = assertApprovalRefused(again, 'used', 'a second use');
  assert.match(textOf(again), /already used/i, textOf(again));
  assert.ok(textOf(again).includes(sc(r).operation_id), `names the operation that used it: ${textOf(again)}`);
  assert.equal(g2.approval_id, g.approval_id);
  assert.equal(seen(h.fixture, DELETE), 1, 'still exactly one delete');

  const show = await approvals(h.gb.dataDir, ['show', g.approval_id]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /state\s+used/, show.stdout);
  assert.ok(show.stdout.includes(`by operation ${sc(r).operation_id}`), show.stdout);
});

test('an approval for button A does not work on button B; it says why, and A can still use it', async () => {
  await openOrders();
  const refA = await buttonRef(h.client, 'Delete all orders');
  const refB = await buttonRef(h.client, 'Delete order 1042');
  const asked = await callTool(h.client, 'browser_click', { target: refA });
  const gA = assertApprovalRequired(asked);
  decisions.alice = { gate: gA, operation: sc(asked).operation_id };
  await decide(h.gb.dataDir, 'approve', gA.approval_id, ['--by', 'alice']);

  const onB = await callTool(h.client, 'browser_click', { target: refB, approval: gA.approval_id });
  const g = assertApprovalRefused(onB, 'mismatch', 'approval A used on B');
  const text = textOf(onB);
  assert.match(text, /another action/i, `the reason: ${text}`);
  assert.ok(text.includes('"Delete all orders"'), `what was approved: ${text}`);
  assert.ok(text.includes('"Delete order 1042"'), `what this call would do: ${text}`);
  assert.ok(g.summary.includes('Delete order 1042'), dump(onB));
  assert.equal(seen(h.fixture, DELETE), 0, 'nothing was deleted');

  // a mismatch does not spend it: A goes through with it, once
  const r = await ok(h.client, 'browser_click', { target: refA, approval: gA.approval_id });
  assert.equal(sc(r).approval?.by, 'alice', dump(r));
  assert.equal(seen(h.fixture, DELETE), 1);
});

test('denied through the CLI: the repeat is refused; list and show print who decided and when', async () => {
  await openOrders();
  const ref = await buttonRef(h.client, 'Delete all orders');
  const asked = await callTool(h.client, 'browser_click', { target: ref });
  const g = assertApprovalRequired(asked);
  decisions.bob = { gate: g, operation: sc(asked).operation_id };
  const t0 = Date.now();
  const out = await decide(h.gb.dataDir, 'deny', g.approval_id, ['--reason', 'we keep the orders', '--by', 'bob']);
  assert.match(out, new RegExp(`Denied ${g.approval_id}`), out);

  const r = await callTool(h.client, 'browser_click', { target: ref, approval: g.approval_id });
  assertApprovalRefused(r, 'denied', 'the repeat after a denial');
  const text = textOf(r);
  assert.match(text, /denied by bob/, text);
  assert.ok(text.includes('we keep the orders'), `the reason reaches the agent: ${text}`);
  assert.equal(seen(h.fixture, DELETE), 0);

  // a decision is final
  const late = await approvals(h.gb.dataDir, ['approve', g.approval_id, '--by', 'mallory']);
  assert.equal(late.code, 1, `approving a denied request fails: ${late.stdout}${late.stderr}`);

  const show = await approvals(h.gb.dataDir, ['show', g.approval_id]);
  assert.equal(show.code, 0, show.stderr);
  assert.match(show.stdout, /state\s+denied/, show.stdout);
  const decided = /decided\s+(\S+) by bob via admin-socket/.exec(show.stdout);
  assert.ok(decided, `show says who decided, when and how: ${show.stdout}`);
  const at = Date.parse(decided[1]);
  assert.ok(at >= t0 - 2000 && at <= Date.now() + 2000, `decided just now: ${decided[1]}`);
  assert.match(show.stdout, /reason\s+we keep the orders/, show.stdout);
  assert.match(show.stdout, /denied\s+by bob via admin-socket: we keep the orders/, `in the history: ${show.stdout}`);
  assert.match(show.stdout, /refused\s+\(operation [^)]+\): denied/, `the refused use is in the history: ${show.stdout}`);

  const list = await approvals(h.gb.dataDir, ['list', '--all']);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`${g.approval_id}\\s+denied`), list.stdout);
  const pending = await approvals(h.gb.dataDir, ['list']);
  assert.ok(!pending.stdout.includes(g.approval_id), `no longer waiting: ${pending.stdout}`);
  const json = await approvals(h.gb.dataDir, ['list', '--all', '--json']);
  assert.equal(json.code, 0, json.stderr);
  const a = JSON.parse(json.stdout).approvals.find((x) => x.id === g.approval_id);
  assert.ok(a, json.stdout);
  assert.equal(a.state, 'denied');
  assert.equal(a.decided_by, 'bob');
  assert.equal(a.reason, 'we keep the orders');
  assert.equal(a.channel, 'admin-socket');
  assert.equal(Date.parse(a.decided_at), at);
});

test('the audit log records each decision with who made it', async () => {
  const body = (r) => r.body || {};
  // the record keeper writes in the background: wait for the last decision
  const records = await pollUntil(() => {
    const all = auditRecords(h.gb.dataDir);
    return all.some((r) => r.kind === 'approval_denied' && body(r).by === 'bob') ? all : null;
  }) || auditRecords(h.gb.dataDir);
  const granted = records.filter((r) => r.kind === 'approval_granted');
  const denied = records.filter((r) => r.kind === 'approval_denied');
  const expect = [
    [granted, defaultDecider()],
    [granted, 'alice'],
    [denied, 'bob'],
  ];
  for (const [list, by] of expect) {
    const { gate, operation } = decisions[by] || {};
    assert.ok(gate, `the test that ${by} decided in ran first`);
    const rec = list.find((r) => body(r).approval_id === gate.approval_id);
    assert.ok(rec, `a record of ${by}'s decision on ${gate.approval_id}: ${JSON.stringify(list)}`);
    const b = body(rec);
    assert.equal(b.by, by, JSON.stringify(rec));
    assert.equal(b.channel, 'admin-socket', JSON.stringify(rec));
    assert.match(b.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, `when: ${JSON.stringify(rec)}`);
    assert.equal(Date.parse(b.at), b.at_ms, JSON.stringify(rec));
    // what was decided on, and the call that asked
    assert.equal(b.tool, 'browser_click', JSON.stringify(rec));
    assert.equal(b.fingerprint, gate.fingerprint, JSON.stringify(rec));
    assert.equal(b.summary, gate.summary, JSON.stringify(rec));
    assert.equal(rec.operation, operation, JSON.stringify(rec));
  }
  assert.equal(body(denied.find((r) => body(r).by === 'bob')).reason, 'we keep the orders');
  assert.ok(!records.some((r) => r.kind === 'approval_denied' && body(r).by === 'mallory'), 'a refused decision is not a decision');
});

async function textOrNull(selector) {
  const r = await ok(h.client, 'browser_evaluate', {
    function: `() => { const e = document.querySelector(${JSON.stringify(selector)}); return e ? e.textContent : null; }`,
  });
  return sc(r).result;
}
