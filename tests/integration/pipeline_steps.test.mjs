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
  assert, useGlassbox, ok, sc, dump, snapshot, findRef, auditRecords, glassboxBin, TOOL_NAMES, callTool, pollUntil, textOf,
} from '../e2e/lib.mjs';
import { putFile } from './files_helpers.mjs';

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

/* Calls tool with args, expecting success, and checks its steps. */
async function calls(tool, args, seen) {
  const r = await ok(h.client, tool, args);
  assert.ok(plan[tool], `${tool} is in glassbox tools`);
  assert.deepEqual(await recordedSteps(r), plan[tool], `${tool} runs the steps its descriptor plans`);
  seen.add(tool);
  return r;
}

test('each tool runs the steps its descriptor plans, and its record says so', async () => {
  const seen = new Set();
  await calls('browser_navigate', { url: h.url('/form.html') }, seen);
  let snap = textOf(await calls('browser_snapshot', {}, seen));
  await calls('browser_type', { target: findRef(snap, 'textbox', 'Name'), text: 'Ada' }, seen);
  await calls('browser_select_option', { target: findRef(snap, 'combobox', 'Country'), values: ['fr'] }, seen);
  await calls('browser_hover', { target: findRef(snap, 'button', 'Save') }, seen);
  await calls('browser_press_key', { key: 'Tab' }, seen);
  await calls('browser_evaluate', { function: '() => document.title' }, seen);
  await calls('browser_take_screenshot', {}, seen);
  await calls('browser_wait_for', { text: 'Account settings' }, seen);
  await calls('browser_click', { target: findRef(snap, 'link', 'Go to the second page') }, seen);
  await calls('browser_navigate_back', {}, seen);
  await calls('browser_navigate', { url: h.url('/dialogs.html') }, seen);
  snap = await snapshot(h.client);
  const held = await callTool(h.client, 'browser_click', { target: findRef(snap, 'button', 'Show notice') });
  assert.ok(sc(held).dialog_open || sc(held).dialogs?.length, `the alert opened: ${dump(held)}`);
  await calls('browser_handle_dialog', { accept: true }, seen);
  await calls('browser_tabs', { action: 'list' }, seen);
  await calls('browser_session', { action: 'status' }, seen);
  // the files tools (docs/files.md): the upload area holds x.txt
  putFile(h.gb.dataDir, 'x.txt', Buffer.from('x\n'));
  await calls('browser_navigate', { url: h.url('/files/upload.html') }, seen);
  await calls('browser_file_upload', { target: '#doc', paths: ['x.txt'] }, seen);
  await calls('browser_console_messages', {}, seen);
  const listed = await calls('browser_network_requests', { static: true }, seen);
  await calls('browser_network_request', { index: sc(listed).requests[0].index }, seen);
  await calls('browser_pdf_save', {}, seen);
  await calls('browser_navigate', { url: h.url('/files/drop.html') }, seen);
  await calls('browser_drop', { target: '#zone', data: { 'text/plain': 'x' } }, seen);
  await calls('browser_close', {}, seen);
  assert.deepEqual([...seen].sort(), [...TOOL_NAMES].sort(), 'every tool of the contract was called');
  assert.deepEqual(plan.browser_snapshot, ['run', 'record'], 'a tool that reads is neither gated nor evidenced');
  assert.deepEqual(plan.browser_click,
    ['gate', 'ledger', 'observe-before', 'run', 'settle', 'observe-after', 'evidence', 'record']);
});
