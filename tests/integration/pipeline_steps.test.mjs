/*
 * Every tool, called once through the MCP SDK client on real Chromium,
 * runs exactly the pipeline steps its descriptor plans (`glassbox tools
 * --json`), and its audit record says which: a tool that changes the
 * page is gated, marked running, observed, verified and evidenced; a tool
 * that reads is none of these.
 */
import { test, before, after } from 'node:test';
import { execFileSync } from 'node:child_process';
import {
  assert, useGlassbox, ok, sc, dump, auditRecords, glassboxBin, TOOL_NAMES, callTool, pollUntil,
} from '../e2e/lib.mjs';
import { runSequence } from '../replay/sequence.mjs';

const h = useGlassbox();
let plan;

before(() => {
  const tools = JSON.parse(execFileSync(glassboxBin(), ['tools', '--json'], { encoding: 'utf8' }));
  plan = Object.fromEntries(tools.map((t) => [t.name, t.steps]));
});

/* The steps recorded for the call that answered r (records are written
 * in the background: waits for it). */
async function recordedSteps(r) {
  const op = sc(r).operation_id;
  const rec = await pollUntil(() =>
    auditRecords(h.gb.dataDir, 'local').find((x) => x.kind === 'tool_call' && x.operation === op));
  assert.ok(rec, `the call ${op} is recorded: ${dump(r)}`);
  return rec.body.steps;
}

test('each tool runs the steps its descriptor plans, and its record says so', async () => {
  const seen = new Set();
  await runSequence(async (tool, args, { mayFail } = {}) => {
    if (mayFail) return callTool(h.client, tool, args);
    const r = await ok(h.client, tool, args);
    assert.ok(plan[tool], `${tool} is in glassbox tools`);
    assert.deepEqual(await recordedSteps(r), plan[tool], `${tool} runs the steps its descriptor plans`);
    seen.add(tool);
    return r;
  }, h.url);
  assert.deepEqual([...seen].sort(), [...TOOL_NAMES].sort(), 'every tool of the contract was called');
  assert.deepEqual(plan.browser_snapshot, ['run', 'record'], 'a tool that reads is neither gated nor evidenced');
  assert.deepEqual(plan.browser_click,
    ['gate', 'ledger', 'observe-before', 'run', 'settle', 'observe-after', 'evidence', 'record']);
});
