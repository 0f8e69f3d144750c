/*
 * The pipeline follows the tools' descriptors: a tool that changes the
 * page or the browser meets the risk rules (kind "other" included),
 * checks the `expect` it accepts, and leaves its record, while a tool
 * that reads goes through none of the rules.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert, startFixtureServer, openGlassbox, ok, sc, dump, callTool, auditRecords, pollUntil,
} from '../e2e/lib.mjs';

let fixture, gb, policyDir;

before(async () => {
  fixture = await startFixtureServer();
  policyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-descriptors-'));
  const policy = path.join(policyDir, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({
    egress: { allow_private: ['127.0.0.1:*', '[::1]:*'] },
    risk: {
      evaluate: 'allow',
      rules: [{ name: 'no-tab-changes', decision: 'forbid', when: { kind: 'other' } }],
    },
  }));
  gb = await openGlassbox({ config: policy });
});

after(async () => {
  await gb?.close();
  gb?.removeDataDir();
  await fixture?.close();
  fs.rmSync(policyDir, { recursive: true, force: true });
});

test('a rule on kind "other" holds browser_tabs and browser_close: nothing changes', async () => {
  await ok(gb.client, 'browser_navigate', { url: fixture.url + '/second.html' });
  const r = await callTool(gb.client, 'browser_tabs', { action: 'new' });
  assert.equal(r.isError, true, dump(r));
  assert.equal(sc(r).error?.code, 'forbidden', dump(r));
  assert.equal(sc(r).gate?.rule, 'no-tab-changes', dump(r));
  const closed = await callTool(gb.client, 'browser_close', {});
  assert.equal(sc(closed).error?.code, 'forbidden', dump(closed));
  // the browser and its one tab are still there
  const title = await ok(gb.client, 'browser_evaluate', { function: '() => document.title' });
  assert.equal(sc(title).result, 'Second page', dump(title));
  const refused = await pollUntil(() => auditRecords(gb.dataDir, 'local')
    .find((x) => x.kind === 'policy_refusal' && x.body?.tool === 'browser_tabs' && x.body?.rule === 'no-tab-changes'));
  assert.ok(refused, 'the refusal is in the trail');
});

test('browser_snapshot reads without meeting the rules', async () => {
  const r = await ok(gb.client, 'browser_snapshot', {});
  assert.equal(sc(r).gate, undefined, dump(r));
});
