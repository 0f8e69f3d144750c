/*
 * The records of one agent session name its sessions the same way,
 * against a real Chromium through the MCP SDK client: every record's
 * "session" is the browser session's id (the tool calls', the approval
 * request's, the session's own), and every record carries the agent
 * (MCP) session's id as body.agent_session, the decision on an approval
 * included. `glassbox report --session` shows the session's approval
 * request and decision with its tool calls.
 *
 * Policy: fixtures/policy/gates.json (a destructive click is held).
 */
import { test, before, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { assert, openGlassbox, startFixtureServer, callTool, ok, sc, dump, glassboxBin } from '../e2e/lib.mjs';
import { GATES_POLICY, decide, buttonRef, assertApprovalRequired, auditRecords } from './gates_helpers.mjs';

let fixture, gb;

before(async () => {
  fixture = await startFixtureServer();
  gb = await openGlassbox({ config: GATES_POLICY });
});

after(async () => {
  await gb?.close();
  gb?.removeDataDir();
  await fixture?.close();
});

test('tool calls, the approval request and its decision name the same browser session and agent session', async () => {
  await ok(gb.client, 'browser_navigate', { url: `${fixture.url}/gates/orders.html` });
  const ref = await buttonRef(gb.client, 'Delete all orders');
  const asked = await callTool(gb.client, 'browser_click', { target: ref });
  const g = assertApprovalRequired(asked);
  const op = sc(asked).operation_id;
  await decide(gb.dataDir, 'approve', g.approval_id);
  await ok(gb.client, 'browser_click', { target: ref, approval: g.approval_id });
  await gb.close();

  const recs = auditRecords(gb.dataDir);
  const opened = recs.find((r) => r.kind === 'session_opened');
  assert.ok(opened, 'the session has its session_opened record');
  const browser = opened.session;
  const agent = opened.body.agent_session;
  assert.ok(browser && agent && browser !== agent, `two ids: ${browser} ${agent}`);

  const calls = recs.filter((r) => r.kind === 'tool_call');
  assert.ok(calls.length >= 3, dump(calls));
  for (const r of calls) {
    assert.equal(r.session, browser, `a tool call's session is the browser session: ${dump(r)}`);
    assert.equal(r.body.agent_session, agent, `a tool call names its agent session: ${dump(r)}`);
  }
  const requested = recs.find((r) => r.kind === 'approval_requested' && r.body.approval_id === g.approval_id);
  assert.ok(requested, 'the approval request is recorded');
  assert.equal(requested.session, browser, `the approval request's session is the browser session, as the tool calls': ${dump(requested)}`);
  assert.equal(requested.body.agent_session, agent, dump(requested));
  assert.equal(requested.operation, op);
  const granted = recs.find((r) => r.kind === 'approval_granted' && r.body.approval_id === g.approval_id);
  assert.ok(granted, 'the decision is recorded');
  assert.equal(granted.body.agent_session, agent, `the decision names the agent session it was asked in: ${dump(granted)}`);
  assert.equal(granted.operation, op, 'the decision belongs to the call that asked');
  for (const r of recs.filter((x) => x.session)) assert.equal(r.session, browser, `no record names the session by another id: ${dump(r)}`);

  // the report of the browser session shows the approval with the calls
  const out = path.join(gb.dataDir, 'trail.html');
  const rep = spawnSync(glassboxBin(), ['report', '--session', browser, '-o', out],
    { env: { ...process.env, GLASSBOX_DATA_DIR: gb.dataDir }, encoding: 'utf8' });
  assert.equal(rep.status, 0, rep.stderr);
  const html = fs.readFileSync(out, 'utf8');
  assert.ok(html.includes(g.approval_id), 'the session\'s report shows its approval');
  assert.match(html, /id="stat-approvals"><b>1<\/b>/, 'and counts the decision');
});
