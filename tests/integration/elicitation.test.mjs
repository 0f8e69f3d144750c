/*
 * Approvals through MCP elicitation, with the SDK client's elicitation
 * handler standing in for the person at the client. The tenant's policy
 * (fixtures/policy/elicitation.json) keeps the shipped risk rules and sets
 * "approvals": {"elicitation": true}; "Delete all orders" on
 * /elicitation.html needs an approval, and each click posts once to
 * /api/save, which the fixture server counts.
 *
 *   accept (approve: true)  the click runs once in the same call; the audit
 *                           log has approval_granted by mcp-elicitation
 *   accept (approve: false), decline, cancel
 *                           nothing runs; approval_denied, "declined"
 *   the tool call cancelled while the question is open
 *                           the question is withdrawn, nothing runs
 *   no elicitation capability
 *                           the ordinary approval_required result
 *   a policy with a misspelt approvals key
 *                           the session does not start, and says why
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert, openGlassbox, startFixtureServer, ElicitRequestSchema, callTool, navigate, snapshot,
  findRef, sc, dump, assertOk, assertToolError, pollUntil, REPO_ROOT,
} from '../e2e/lib.mjs';

const POLICY = path.join(REPO_ROOT, 'fixtures', 'policy', 'elicitation.json');
const SAVE = 'POST /api/save';

let fixture;
let gb; // a client that declares elicitation
let plain; // a client that does not
const asked = []; // the elicitation/create params the handler saw
let answer = null; // what the handler answers next: an ElicitResult, or a function of extra

before(async () => {
  fixture = await startFixtureServer();
  gb = await openGlassbox({
    config: POLICY,
    capabilities: { elicitation: {} },
    setupClient: (client) => client.setRequestHandler(ElicitRequestSchema, async (req, extra) => {
      asked.push(req.params);
      return typeof answer === 'function' ? answer(extra) : answer;
    }),
  });
  plain = await openGlassbox({ config: POLICY });
});

after(async () => {
  for (const g of [gb, plain]) {
    if (!g) continue;
    await g.close();
    g.removeDataDir();
  }
  if (fixture) await fixture.close();
});

function saves() {
  return fixture.hits().requests[SAVE] || 0;
}

function auditRecords(dataDir) {
  const dir = path.join(dataDir, 'tenants', 'local', 'audit');
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l));
}

/* The audit record of kind for approval id. */
function approvalRecord(dataDir, kind, id) {
  return auditRecords(dataDir).find((r) => r.kind === kind && r.body?.approval_id === id);
}

/* Opens the page fresh and clicks "Delete all orders" with client; returns the result. */
async function clickDelete(client) {
  fixture.reset();
  await navigate(client, fixture.url + '/elicitation.html');
  const ref = findRef(await snapshot(client), 'button', 'Delete all orders');
  return callTool(client, 'browser_click', { target: ref });
}

test('accepted at the client: the click runs once, in the same call, and is on record', async () => {
  asked.length = 0;
  answer = { action: 'accept', content: { approve: true } };
  const r = assertOk(await clickDelete(gb.client), 'the approved click');

  assert.equal(asked.length, 1, 'the client was asked once');
  const q = asked[0];
  assert.match(q.message, /click button "Delete all orders" on http:\/\/127\.0\.0\.1:\d+\/elicitation\.html/);
  assert.match(q.message, /apr-[0-9a-f]+/);
  assert.deepEqual(q.requestedSchema.required, ['approve']);
  assert.equal(q.requestedSchema.properties.approve.type, 'boolean');
  assert.equal(q.requestedSchema.properties.approve.title, 'Approve this action?');

  const approvalId = /apr-[0-9a-f]+/.exec(q.message)[0];
  assert.equal(sc(r).approval?.id, approvalId, dump(r));
  assert.equal(sc(r).approval?.by, 'mcp-elicitation:glassbox-tests', dump(r));
  assert.ok(await pollUntil(() => saves() >= 1), 'the click reached the server');
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(saves(), 1, 'exactly one POST /api/save');

  const rec = await pollUntil(() => approvalRecord(gb.dataDir, 'approval_granted', approvalId));
  assert.ok(rec, 'an approval_granted record in the audit log');
  assert.equal(rec.body.by, 'mcp-elicitation:glassbox-tests', JSON.stringify(rec));
  assert.equal(rec.body.channel, 'mcp-elicitation', JSON.stringify(rec));

  // the approval was spent: repeating the call with it does not run the click again
  const again = await callTool(gb.client, 'browser_click', {
    target: findRef(await snapshot(gb.client), 'button', 'Delete all orders'), approval: approvalId,
  });
  assertToolError(again, 'a spent approval');
  assert.equal(sc(again).error?.code, 'approval_refused', dump(again));
  assert.equal(saves(), 1, 'still one POST /api/save');
});

for (const [label, reply, how] of [
  ['declined', { action: 'decline' }, 'the person declined'],
  ['cancelled', { action: 'cancel' }, 'the person dismissed the question'],
  ['answered no', { action: 'accept', content: { approve: false } }, 'the person answered no'],
]) {
  test(`${label} at the client: nothing runs and the call says it was declined`, async () => {
    asked.length = 0;
    answer = reply;
    const r = await clickDelete(gb.client);
    const text = assertToolError(r, `the ${label} click`);

    assert.equal(asked.length, 1, 'the client was asked once');
    assert.equal(sc(r).error?.code, 'approval_denied', dump(r));
    assert.match(text, /declined through the client/);
    assert.ok(text.includes(`(${how})`), `the message says how: ${text}`);
    assert.equal(sc(r).gate?.status, 'approval_denied', dump(r));
    const approvalId = sc(r).gate?.approval_id;
    assert.match(approvalId || '', /^apr-/, dump(r));

    await new Promise((res) => setTimeout(res, 300));
    assert.equal(saves(), 0, 'no POST /api/save');
    const rec = await pollUntil(() => approvalRecord(gb.dataDir, 'approval_denied', approvalId));
    assert.ok(rec, 'an approval_denied record in the audit log');
    assert.equal(rec.body.reason, 'declined through the client', JSON.stringify(rec));
    assert.equal(rec.body.channel, 'mcp-elicitation', JSON.stringify(rec));

    // a denied approval cannot be used afterwards either
    const again = await callTool(gb.client, 'browser_click', {
      target: findRef(await snapshot(gb.client), 'button', 'Delete all orders'), approval: approvalId,
    });
    assertToolError(again, 'a denied approval');
    assert.equal(sc(again).error?.code, 'approval_refused', dump(again));
    assert.equal(saves(), 0, 'still no POST /api/save');
  });
}

test('a client without the elicitation capability gets the ordinary approval_required result', async () => {
  const r = await clickDelete(plain.client);
  const text = assertToolError(r, 'the click without an approval');
  assert.equal(sc(r).error?.code, 'approval_required', dump(r));
  assert.equal(sc(r).gate?.status, 'approval_required', dump(r));
  assert.match(sc(r).gate?.approval_id || '', /^apr-/, dump(r));
  assert.match(text, /approv/i);
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(saves(), 0, 'no POST /api/save');
});

test('cancelling the tool call withdraws the open question; nothing runs', async () => {
  asked.length = 0;
  let withdrawn;
  const question = new Promise((resolve) => {
    answer = (extra) => new Promise((done) => {
      resolve();
      extra.signal.addEventListener('abort', () => {
        withdrawn = true;
        done({ action: 'accept', content: { approve: true } }); // too late: not sent
      });
    });
  });
  fixture.reset();
  await navigate(gb.client, fixture.url + '/elicitation.html');
  const ref = findRef(await snapshot(gb.client), 'button', 'Delete all orders');
  const ac = new AbortController();
  const call = callTool(gb.client, 'browser_click', { target: ref }, { signal: ac.signal });
  await question;
  ac.abort('changed my mind');
  await assert.rejects(call, 'the cancelled call rejects on the client');
  assert.ok(await pollUntil(() => withdrawn), 'the server withdrew its question');
  await new Promise((res) => setTimeout(res, 300));
  assert.equal(saves(), 0, 'no POST /api/save');
  // the session goes on
  assertOk(await callTool(gb.client, 'browser_snapshot', {}), 'a snapshot after the cancel');
});

test('a misspelt approvals key stops the session with a message that names it', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-policy-'));
  const cfg = path.join(dir, 'policy.json');
  const policy = JSON.parse(fs.readFileSync(POLICY, 'utf8'));
  fs.writeFileSync(cfg, JSON.stringify({ ...policy, approvals: { elicitaton: true } }));
  const bad = await openGlassbox({ config: cfg });
  try {
    const r = await callTool(bad.client, 'browser_navigate', { url: fixture.url + '/elicitation.html' });
    const text = assertToolError(r, 'a call in a session whose policy is not valid');
    assert.match(text, /approvals\.elicitaton is not a setting/);
  } finally {
    await bad.close();
    bad.removeDataDir();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
