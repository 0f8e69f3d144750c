/*
 * The evidence trail of a real session: every call leaves a signed audit
 * record, `glassbox audit verify` accepts the untouched trail and names
 * the record an edit broke, `glassbox report` renders it, and a store
 * that cannot be written makes the results say so (or, for a tenant that
 * requires evidence, refuses before acting).
 */
import { test, after } from 'node:test';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, openGlassbox, startFixtureServer, glassboxBin, callTool, ok, sc, dump, REPO_ROOT, pollUntil,
} from '../e2e/lib.mjs';

const bin = glassboxBin();
let fixture;
const opened = [];

/* Moves the artifact store away (once it exists) and puts a file in its
 * place, so nothing more can be stored there. */
async function breakStore(dataDir) {
  const artifacts = path.join(dataDir, 'tenants', 'local', 'artifacts');
  assert.ok(await pollUntil(() => fs.existsSync(artifacts)), 'the store exists');
  fs.renameSync(artifacts, artifacts + '.moved');
  fs.writeFileSync(artifacts, 'not a directory');
}

async function session(policy) {
  if (!fixture) fixture = await startFixtureServer();
  const saved = process.env.GLASSBOX_CONFIG;
  let cfg;
  if (policy) {
    cfg = path.join(fs.mkdtempSync('/tmp/glassbox-policy-'), 'policy.json');
    const base = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json')));
    fs.writeFileSync(cfg, JSON.stringify({ ...base, ...policy }));
    process.env.GLASSBOX_CONFIG = cfg;
  }
  try {
    const gb = await openGlassbox();
    opened.push(gb);
    return gb;
  } finally {
    if (saved === undefined) delete process.env.GLASSBOX_CONFIG;
    else process.env.GLASSBOX_CONFIG = saved;
  }
}

function auditLines(dataDir) {
  const dir = path.join(dataDir, 'tenants', 'local', 'audit');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()
    .flatMap((f) => fs.readFileSync(path.join(dir, f), 'utf8').split('\n').filter(Boolean))
    .map((l) => JSON.parse(l));
}

function glassbox(args) {
  return spawnSync(bin, args, { encoding: 'utf8' });
}

after(async () => {
  for (const gb of opened) {
    await gb.close();
    gb.removeDataDir();
  }
  if (fixture) await fixture.close();
});

test('every call leaves a signed record; the untouched trail verifies; an edit is named', async () => {
  const gb = await session();
  const nav = await ok(gb.client, 'browser_navigate', { url: fixture.url + '/form.html' });
  const typed = await ok(gb.client, 'browser_type', { target: '#name', text: 'Ada' });
  const click = await ok(gb.client, 'browser_click', { target: '#save' });
  await gb.close();

  const records = auditLines(gb.dataDir);
  const calls = records.filter((r) => r.kind === 'tool_call');
  for (const r of [nav, typed, click]) {
    const rec = calls.find((c) => c.operation === sc(r).operation_id);
    assert.ok(rec, `an audit record for ${sc(r).tool}: ${dump(r)}`);
    assert.ok(rec.sig && rec.hash && rec.prev_hash !== undefined, 'signed and chained');
    const kinds = (rec.artifacts || []).map((a) => a.kind);
    assert.ok(kinds.includes('screenshot'), `the screenshot is referenced: ${kinds}`);
  }
  const clickRec = calls.find((c) => c.operation === sc(click).operation_id);
  const kinds = clickRec.artifacts.map((a) => a.kind);
  assert.ok(kinds.some((k) => /annotated/.test(k)), `the click has an annotated copy: ${kinds}`);
  assert.ok(records.some((r) => r.kind === 'session_opened' && r.body.manifest), 'the manifest is recorded');

  const ok1 = glassbox(['audit', 'verify', '--data-dir', gb.dataDir]);
  assert.equal(ok1.status, 0, ok1.stdout + ok1.stderr);

  const report = path.join(gb.dataDir, 'trail.html');
  const rep = glassbox(['report', '--data-dir', gb.dataDir, '--tenant', 'local', '-o', report]);
  assert.equal(rep.status, 0, rep.stdout + rep.stderr);
  const html = fs.readFileSync(report, 'utf8');
  assert.match(html, /browser_click|Click/);
  assert.match(html, /form\.html/);
  assert.match(html, /verified/i);

  // Edit one byte of the second record: verify names it and fails.
  const dir = path.join(gb.dataDir, 'tenants', 'local', 'audit');
  const file = path.join(dir, fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort()[0]);
  const lines = fs.readFileSync(file, 'utf8').split('\n');
  lines[1] = lines[1].replace('"tool_call"', '"tool_cull"').replace('"session_opened"', '"session_openex"');
  fs.writeFileSync(file, lines.join('\n'));
  const bad = glassbox(['audit', 'verify', '--data-dir', gb.dataDir]);
  assert.notEqual(bad.status, 0, 'a tampered trail does not verify');
  assert.match(bad.stdout + bad.stderr, /seq 2|record 2/, bad.stdout + bad.stderr);
});

test('a store that cannot be written: the result says the evidence could not be kept', async () => {
  const gb = await session();
  const nav = await ok(gb.client, 'browser_navigate', { url: fixture.url + '/form.html' });
  // reading an artifact waits until everything queued before it is written
  await gb.client.readResource({ uri: sc(nav).evidence[0].uri });
  await breakStore(gb.dataDir);
  const click = await callTool(gb.client, 'browser_click', { target: '#save' });
  // a call that changes the page waits for its record: its own result says so
  assert.equal(sc(click).recorded, false, dump(click));
  assert.match(sc(click).evidence_error, new RegExp(`evidence of ${sc(click).operation_id} could not be kept`), dump(click));
  assert.match(click.content[0].text, /Note: .*could not be kept/, dump(click));
});

test('a tenant that requires evidence is refused before acting when it cannot be kept', async () => {
  const gb = await session({ require_evidence: true });
  await ok(gb.client, 'browser_navigate', { url: fixture.url + '/form.html' });
  await breakStore(gb.dataDir);
  await fetch(fixture.url + '/__reset', { method: 'POST' });
  const r = await callTool(gb.client, 'browser_click', { target: '#save' });
  assert.equal(r.isError, true, dump(r));
  assert.match(r.content[0].text, /requires evidence/);
  const hits = await (await fetch(fixture.url + '/__hits')).json();
  assert.equal(hits.requests['POST /api/save'] || 0, 0, 'the click did not happen');
});

test('before_screenshots keeps the page as it was before each action, beside the evidence', async () => {
  const gb = await session({ before_screenshots: true, retention_days: 30 });
  await ok(gb.client, 'browser_navigate', { url: fixture.url + '/form.html' });
  const click = await ok(gb.client, 'browser_click', { target: '#save' });
  await gb.close();
  const rec = auditLines(gb.dataDir).find((r) => r.kind === 'tool_call' && r.operation === sc(click).operation_id);
  const kinds = rec.artifacts.map((a) => a.kind);
  assert.ok(kinds.includes('screenshot_before') && kinds.includes('screenshot'), `${kinds}`);
  const before = rec.artifacts.find((a) => a.kind === 'screenshot_before');
  const after = rec.artifacts.find((a) => a.kind === 'screenshot');
  assert.notEqual(before.sha256, after.sha256, 'the click changed the page: the two differ');
  const v = glassbox(['audit', 'verify', '--data-dir', gb.dataDir]);
  assert.equal(v.status, 0, v.stdout + v.stderr);
});
