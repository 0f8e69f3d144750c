/*
 * The pipeline without a browser: glassbox runs one call of every tool
 * against a recorded Chromium (tests/replay/fake-chromium.mjs playing
 * fixtures/replay/tools.jsonl.gz back), and each call runs exactly the
 * steps its descriptor plans (`glassbox tools --json`), as its audit
 * record says: what is checked is glassbox's own pipeline, with the
 * browser's answers fixed.
 */
import { test, before, after } from 'node:test';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert, openGlassbox, ok, sc, dump, auditRecords, glassboxBin, TOOL_NAMES, callTool, pollUntil, REPO_ROOT,
} from '../e2e/lib.mjs';
import { runSequence } from '../replay/sequence.mjs';

const SITE_PORT = 7;
let gb, dir, plan;

before(async () => {
  plan = Object.fromEntries(JSON.parse(execFileSync(glassboxBin(), ['tools', '--json'], { encoding: 'utf8' }))
    .map((t) => [t.name, t.steps]));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-replay-'));
  const chromium = path.join(dir, 'chromium');
  fs.writeFileSync(chromium, `#!/bin/sh\nexec ${process.execPath} ${path.join(REPO_ROOT, 'tests', 'replay', 'fake-chromium.mjs')} ${path.join(REPO_ROOT, 'fixtures', 'replay', 'tools.jsonl.gz')} ${SITE_PORT} "$@"\n`);
  fs.chmodSync(chromium, 0o755);
  gb = await openGlassbox({ env: { GLASSBOX_CHROMIUM: chromium, GLASSBOX_BROWSER_USER: 'root' } });
});

after(async () => {
  await gb?.close();
  gb?.removeDataDir();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('on a recorded browser, every tool runs the steps its descriptor plans', async () => {
  const seen = new Set();
  await runSequence(async (tool, args, { mayFail } = {}) => {
    if (mayFail) return callTool(gb.client, tool, args);
    const r = await ok(gb.client, tool, args);
    const op = sc(r).operation_id;
    const rec = await pollUntil(() => auditRecords(gb.dataDir, 'local')
      .find((x) => x.kind === 'tool_call' && x.operation === op));
    assert.ok(rec, `${tool}: its call is recorded: ${dump(r)}`);
    assert.deepEqual(rec.body.steps, plan[tool], `${tool} runs the steps its descriptor plans`);
    seen.add(tool);
    return r;
  }, (p) => `http://127.0.0.1:${SITE_PORT}${p}`);
  assert.deepEqual([...seen].sort(), [...TOOL_NAMES].sort(), 'every tool of the contract was called');
});
