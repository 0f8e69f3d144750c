/*
 * An agent's session becomes a test: the official MCP SDK client drives
 * `glassbox mcp` through the fixture shop as an agent does (snapshot refs,
 * expectations, one call the policy refuses), then the session is exported with
 * `glassbox session export` as a glassbox flow, replayed green with
 * `glassbox run`, and as a Playwright Test spec, green with `npx
 * playwright test` on a plain Chromium; its trace opens in Playwright's
 * trace viewer with every call, the failed one showing its error.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, openGlassbox, startFixtureServer, glassboxBin, REPO_ROOT, newDataDir, auditRecords,
  snapshot, findRef, ok, callTool, sc,
} from './lib.mjs';
import { exec, inTraceViewer, runSpec } from '../integration/trace_helpers.mjs';

const POLICY = path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json');
let fixture;
let work;
let session;
let calls;
let failedMessage;

before(async () => {
  fixture = await startFixtureServer();
  work = newDataDir('glassbox-session-export-');
  const gb = await openGlassbox({ dataDir: path.join(work, 'data'), config: POLICY });
  const shop = `http://shop.test:${fixture.port}/shop/`;
  try {
    await ok(gb.client, 'browser_navigate', { url: shop, expect: { title: 'Corner Shop' } });
    let snap = await snapshot(gb.client);
    await ok(gb.client, 'browser_click', { target: findRef(snap, 'button', 'Add Coffee beans to cart'), expect: { text: 'Cart (1)' } });
    /* a call that fails: not a step of the test, but in the trace with its error */
    const failed = await callTool(gb.client, 'browser_navigate', { url: `http://evil.test:${fixture.port}/` });
    assert.equal(sc(failed).ok, false);
    failedMessage = sc(failed).error.message;
    await ok(gb.client, 'browser_click', { target: findRef(snap, 'link', 'Checkout'), expect: { urlContains: '/shop/checkout.html' } });
    snap = await snapshot(gb.client);
    await ok(gb.client, 'browser_type', { target: findRef(snap, 'textbox', 'Email'), text: 'qa@example.test', expect: { value: 'qa@example.test' } });
    await ok(gb.client, 'browser_select_option', { target: findRef(snap, 'combobox', 'Shipping'), values: ['Express'], expect: { text: 'Total: €19.50' } });
  } finally {
    await gb.close();
  }
  const records = auditRecords(path.join(work, 'data'));
  session = records.find((r) => r.kind === 'tool_call').session;
  calls = records.filter((r) => r.session === session && r.kind === 'tool_call');
});

after(async () => {
  await fixture?.close();
  if (work && !process.env.GLASSBOX_KEEP_DATA) fs.rmSync(work, { recursive: true, force: true });
});

const glassbox = (args, env = {}) => exec(glassboxBin(), args,
  { cwd: work, env: { GLASSBOX_CONFIG: '', GLASSBOX_DATA_DIR: path.join(work, 'data'), ...env } });

test('an agent session acting by snapshot refs → flow → glassbox run passes', async () => {
  const file = path.join(work, 'agent.json');
  const r = await glassbox(['session', 'export', '--session', session, '--as', 'flow', '--name', 'agent replay', '-o', file]);
  assert.equal(r.code, 0, r.stderr);
  const flow = JSON.parse(fs.readFileSync(file, 'utf8'));
  /* refs are gone: the element's role and name instead; the failed call left out */
  assert.deepEqual(flow.steps.map((s) => Object.keys(s)[0]), ['navigate', 'click', 'click', 'type', 'select']);
  assert.deepEqual(flow.steps[1].click, { role: 'button', name: 'Add Coffee beans to cart' });
  assert.deepEqual(flow.steps[1].expect, { text: 'Cart (1)' });
  assert.match(flow.description, /\(5 steps; 3 calls that failed or do not change the page left out\)/);
  const run = await glassbox(['run', file, '--config', POLICY]);
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /PASS agent replay/);
});

test('an agent session → Playwright spec → npx playwright test passes', async () => {
  const dir = path.join(work, 'spec');
  fs.mkdirSync(dir);
  const r = await glassbox(['session', 'export', '--session', session, '--as', 'playwright', '-o', path.join(dir, 'agent.spec.ts')]);
  assert.equal(r.code, 0, r.stderr);
  const spec = fs.readFileSync(path.join(dir, 'agent.spec.ts'), 'utf8');
  // the code the action ran, as Playwright's generator writes it
  assert.match(spec, /page\.getByRole\('link', \{ name: 'Checkout' \}\)\.click\(\);/);
  assert.match(spec, /toHaveValue\("qa@example\.test"\)/);
  assert.ok(!spec.includes('evil.test'), 'the failed call is not a step');
  const pw = await runSpec(dir);
  assert.equal(pw.code, 0, `${pw.stdout}\n${pw.stderr}`);
  assert.match(pw.stdout, /1 passed/);
});

test('the agent session\'s trace shows every call, the failed one with its error', async () => {
  const zip = path.join(work, 'agent.zip');
  const r = await glassbox(['trace', 'export', '--session', session, '-o', zip]);
  assert.equal(r.code, 0, r.stderr);
  await inTraceViewer(zip, async (page) => {
    const entries = page.locator('.tree-view-entry');
    await entries.first().waitFor({ timeout: 60000 });
    assert.equal(await entries.count(), calls.length, 'one action per tool call, snapshots included');
    const titles = await entries.allInnerTexts();
    calls.forEach((c, i) => assert.ok(titles[i].startsWith(c.body.tool), `${titles[i]} is ${c.body.tool}`));
    const failed = calls.findIndex((c) => c.body.ok === false);
    await entries.nth(failed).click();
    await page.getByRole('tab', { name: /Errors/ }).click();
    await page.getByText(failedMessage.slice(0, 60)).first().waitFor({ timeout: 30000 });
  });
});
