/*
 * No state-changing action without its record, against a real Chromium
 * through the MCP SDK client: a 2 MiB browser_type text still leaves its
 * audit record and its screenshot's metadata record, with the text cut,
 * marked truncated, with its sha256 and length, and nothing of it beyond
 * the cut in clear; `glassbox audit verify` passes. A record that cannot
 * be written at all is said so in the same call's result (when the tenant
 * answers before its evidence, in the first result after the failure).
 */
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, usePolicySessions, glassboxBin, callTool, ok, sc, dump,
} from '../e2e/lib.mjs';

const bin = glassboxBin();
const HEAD_BYTES = 256; /* EVID_TRUNCATE_HEAD_BYTES: what is kept of a cut text */
const { session, url } = usePolicySessions();

function auditFiles(dataDir) {
  const dir = path.join(dataDir, 'tenants', 'local', 'audit');
  return fs.readdirSync(dir).filter((f) => f.endsWith('.jsonl')).sort().map((f) => path.join(dir, f));
}

function auditLines(dataDir) {
  return auditFiles(dataDir).flatMap((f) => fs.readFileSync(f, 'utf8').split('\n').filter(Boolean));
}

/* Letters in an order that does not repeat within any 64-byte window, so
 * that a piece of it found in a file can only come from the text. */
function longText(bytes) {
  const seed = crypto.createHash('sha256').update('records').digest();
  const out = Buffer.alloc(bytes);
  let block = seed;
  for (let i = 0; i < bytes; i++) {
    if (i % 32 === 0) block = crypto.createHash('sha256').update(block).digest();
    out[i] = 97 + (block[i % 32] % 26);
  }
  return out.toString('latin1');
}

test('a 2 MiB browser_type leaves its record, truncated with sha256 and length; the trail verifies', async () => {
  const gb = await session({ require_evidence: true });
  const text = longText(2 * 1024 * 1024);
  const sha = crypto.createHash('sha256').update(text).digest('hex');
  await ok(gb.client, 'browser_navigate', { url: url('/form.html') });
  const typed = await ok(gb.client, 'browser_type', { target: '#name', text }, { timeout: 120000 });
  const op = sc(typed).operation_id;
  assert.equal(sc(typed).evidence_error, undefined, dump(typed));
  assert.notEqual(sc(typed).recorded, false, dump(typed));
  await gb.close();

  // the audit record
  const lines = auditLines(gb.dataDir);
  const line = lines.find((l) => JSON.parse(l).operation === op);
  assert.ok(line, `an audit record for ${op}`);
  const rec = JSON.parse(line);
  assert.equal(rec.kind, 'tool_call');
  assert.equal(rec.body.truncated, true, 'the record says it was cut');
  const cut = rec.body.arguments.text;
  assert.equal(cut.truncated, true, JSON.stringify(cut).slice(0, 400));
  assert.equal(cut.sha256, sha, 'the sha256 of the whole text');
  assert.equal(cut.length, text.length, 'the length of the whole text');
  assert.equal(rec.body.arguments.target, '#name', 'the rest of the arguments is kept');
  for (const at of [HEAD_BYTES, 4096, 1024 * 1024, text.length - 64]) {
    assert.ok(!line.includes(text.slice(at, at + 64)), `the text from byte ${at} is not in the record`);
  }
  assert.ok(line.length < 1024 * 1024, `the record is under the ceiling: ${line.length} bytes`);

  // the screenshot's metadata record, vouched for by the audit record
  const shot = rec.artifacts.find((a) => a.kind === 'screenshot');
  assert.ok(shot && shot.meta && shot.meta_sha256, JSON.stringify(rec.artifacts));
  const metaPath = path.join(gb.dataDir, 'tenants', 'local', 'artifacts', shot.sha256.slice(0, 2), shot.meta);
  const metaText = fs.readFileSync(metaPath, 'utf8');
  assert.equal(crypto.createHash('sha256').update(metaText).digest('hex'), shot.meta_sha256);
  const meta = JSON.parse(metaText);
  assert.equal(meta.arguments_truncated, true);
  assert.equal(meta.arguments.text.sha256, sha);
  assert.equal(meta.arguments.text.length, text.length);
  assert.ok(!metaText.includes(text.slice(HEAD_BYTES, HEAD_BYTES + 64)), 'the metadata holds only the head');

  const v = spawnSync(bin, ['audit', 'verify', '--data-dir', gb.dataDir], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stdout + v.stderr);

  // and an edit of the metadata record is named by verify
  fs.writeFileSync(metaPath, metaText.replace('"browser_type"', '"browser_tipe"'));
  const bad = spawnSync(bin, ['audit', 'verify', '--data-dir', gb.dataDir], { encoding: 'utf8' });
  assert.notEqual(bad.status, 0, 'an edited metadata record does not verify');
  assert.match(bad.stdout + bad.stderr, /metadata record/, bad.stdout + bad.stderr);
});

/* A session whose audit log's last line is damaged after its first
 * navigate: its directory is still writable, so the check before acting
 * passes, but no record can be appended after that line. */
async function sessionWithDamagedLog(policy) {
  const gb = await session(policy);
  const nav = await ok(gb.client, 'browser_navigate', { url: url('/form.html') });
  // reading an artifact waits until everything queued before it is written
  await gb.client.readResource({ uri: sc(nav).evidence[0].uri });
  const [file] = auditFiles(gb.dataDir).slice(-1);
  fs.appendFileSync(file, '{"damaged": true}\n');
  return gb;
}

function assertSaysNotRecorded(r) {
  assert.equal(sc(r).recorded, false, dump(r));
  assert.match(sc(r).evidence_error, /could not be kept|damaged/, dump(r));
  assert.match(r.content[0].text, /Note: .*(could not be kept|damaged)/, dump(r));
}

for (const [who, policy] of [['a tenant that requires evidence', { require_evidence: true }], ['every tenant (the default order)', {}]]) {
  test(`a record that cannot be written: the same call says so, for ${who}`, async () => {
    const gb = await sessionWithDamagedLog(policy);
    assertSaysNotRecorded(await callTool(gb.client, 'browser_type', { target: '#name', text: 'Ada' }));
  });
}

test('a record that cannot be written after an answer given before its evidence: the first answer after its failure says so', async () => {
  const gb = await sessionWithDamagedLog({ evidence: { before_answer: false } });
  const typed = await callTool(gb.client, 'browser_type', { target: '#name', text: 'Ada' });
  assert.equal(sc(typed).ok, true, dump(typed));
  // the next call does not wait for the disk: once the record was tried
  // (reading the evidence waits for everything queued), the next answer says so
  await gb.client.readResource({ uri: sc(typed).evidence[0].uri }).catch(() => {});
  const next = await callTool(gb.client, 'browser_snapshot', {});
  assert.match(next.content[0].text, /could not be kept|damaged/, dump(next));
  assert.match(sc(next).evidence_error, /could not be kept|damaged/, dump(next));
  const op = sc(typed).operation_id;
  assert.ok(next.content[0].text.includes(op), `it names the operation ${op}: ${dump(next)}`);
  // said once (later records fail too, each said for its own operation)
  const again = await callTool(gb.client, 'browser_snapshot', {});
  assert.ok(!again.content[0].text.includes(op), dump(again));
});

test('several records that cannot be written before the next answer: every one is said, once', async () => {
  const gb = await sessionWithDamagedLog({ evidence: { before_answer: false } });
  const port = new URL(url('/')).port;
  // three requests to a denied host, each refused and recorded (a
  // policy_refusal record each), then the call's own record after its
  // answer: four records, none of which can be appended
  const loaded = await callTool(gb.client, 'browser_evaluate', {
    function: `() => Promise.all([1, 2, 3].map((i) => new Promise((done) => {
      const img = new Image();
      img.onload = img.onerror = () => done(i);
      img.src = 'http://evil.test:${port}/refused-' + i + '.png';
      document.body.append(img);
    })))`,
  });
  assert.equal(sc(loaded).ok, true, dump(loaded));
  assert.equal((sc(loaded).blocked || []).length, 3, dump(loaded));
  const op = sc(loaded).operation_id;
  // reading the evidence waits until everything queued was tried
  await gb.client.readResource({ uri: sc(loaded).evidence[0].uri }).catch(() => {});
  const next = await callTool(gb.client, 'browser_snapshot', {});
  const said = [loaded, next].flatMap((r) => sc(r).evidence_errors || []);
  const notes = [loaded, next].flatMap((r) => r.content[0].text.split('\n').filter((l) => l.startsWith('Note: ') && l.includes(op)));
  assert.equal(said.filter((e) => e.includes(op)).length, 4, `each of the four records is said: ${JSON.stringify(said)}\n${dump(next)}`);
  assert.equal(notes.length, 4, notes.join('\n'));
  for (const e of said) assert.match(e, /could not be kept|damaged/);
  assert.equal(sc(next).evidence_error, (sc(next).evidence_errors || []).join('; ') || undefined, dump(next));
  // said once
  const again = await callTool(gb.client, 'browser_snapshot', {});
  assert.ok(!(sc(again).evidence_errors || []).some((e) => e.includes(op)), dump(again));
  assert.ok(!again.content[0].text.includes(op), dump(again));
});
