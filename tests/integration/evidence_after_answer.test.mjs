/*
 * Answer first (policy "evidence": {"before_answer": false}): a call that
 * changes the page answers once the page is re-read and verified; its
 * screenshot is taken right after, before the session's next call, and
 * linked from the answer by the operation
 * (glassbox://evidence/<operation>/screenshot). Reading that link gives
 * the very image the audit record names, the trail verifies, and a tenant
 * that requires evidence keeps the synchronous order.
 */
import { test } from 'node:test';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import {
  assert, usePolicySessions, ok, sc, dump, auditRecords, pollUntil, glassboxBin, isPng,
} from '../e2e/lib.mjs';

const { session, url } = usePolicySessions();

/* The PNG behind a resource URI. */
async function readPng(gb, uri) {
  const r = await gb.client.readResource({ uri });
  const png = Buffer.from(r.contents[0].blob, 'base64');
  assert.ok(isPng(png), `${uri} is a PNG`);
  return png;
}

test('the answer links its screenshot by the operation; the link gives the image the record names', async () => {
  const gb = await session({ evidence: { before_answer: false } });
  const nav = await ok(gb.client, 'browser_navigate', { url: url('/form.html') });
  const op = sc(nav).operation_id;
  const [ev] = sc(nav).evidence;
  assert.equal(ev.uri, `glassbox://evidence/${op}/screenshot`, dump(nav));
  assert.equal(ev.pending, true, dump(nav));
  assert.ok(nav.content.some((c) => c.type === 'resource_link' && c.uri === ev.uri), dump(nav));
  // read at once: the read waits for the screenshot the worker is taking
  const png = await readPng(gb, ev.uri);
  const sha = crypto.createHash('sha256').update(png).digest('hex');
  const rec = await pollUntil(() => auditRecords(gb.dataDir, 'local').find((x) => x.kind === 'tool_call' && x.operation === op));
  assert.ok(rec, 'the call is recorded');
  assert.equal(rec.body.evidence[0].sha256, sha, `the record names that image: ${JSON.stringify(rec.body.evidence)}`);
  assert.equal(rec.body.evidence[0].pending, undefined, 'the record is written once the screenshot is in');
  // the next action starts after the screenshot: its own is another image of another page state
  const typed = await ok(gb.client, 'browser_type', { target: '#name', text: 'Ada' });
  const png2 = await readPng(gb, sc(typed).evidence[0].uri);
  assert.notEqual(crypto.createHash('sha256').update(png2).digest('hex'), sha, 'typing changed what the page shows');
  const v = spawnSync(glassboxBin(), ['audit', 'verify', '--tenant', 'local', '--data-dir', gb.dataDir], { encoding: 'utf8' });
  assert.equal(v.status, 0, v.stdout + v.stderr);
});

test('an unknown operation\'s evidence link is a clear resource error', async () => {
  const gb = await session({ evidence: { before_answer: false } });
  await ok(gb.client, 'browser_navigate', { url: url('/form.html') });
  await assert.rejects(gb.client.readResource({ uri: 'glassbox://evidence/op-nothing/screenshot' }), /no screenshot|not found/);
});

test('a tenant that requires evidence keeps the synchronous order: the answer carries the sha', async () => {
  const gb = await session({ evidence: { before_answer: false }, require_evidence: true });
  const nav = await ok(gb.client, 'browser_navigate', { url: url('/form.html') });
  const [ev] = sc(nav).evidence;
  assert.match(ev.sha256 || '', /^[0-9a-f]{64}$/, dump(nav));
  assert.equal(ev.uri, `glassbox://artifact/${ev.sha256}`);
});

test('a script that changes the page answers first too; one that changes nothing links the last screenshot', async () => {
  const gb = await session({ evidence: { before_answer: false } });
  const nav = await ok(gb.client, 'browser_navigate', { url: url('/form.html') });
  const navPng = await readPng(gb, sc(nav).evidence[0].uri);
  const changed = await ok(gb.client, 'browser_evaluate', {
    function: "() => { document.querySelector('h1').textContent = 'Changed by the script'; return 1; }",
  });
  const op = sc(changed).operation_id;
  const [ev] = sc(changed).evidence;
  assert.equal(ev.uri, `glassbox://evidence/${op}/screenshot`, dump(changed));
  assert.equal(ev.pending, true, dump(changed));
  const png = await readPng(gb, ev.uri);
  assert.ok(!png.equals(navPng), 'the screenshot shows the page the script changed');
  const sha = crypto.createHash('sha256').update(png).digest('hex');
  const rec = await pollUntil(() => auditRecords(gb.dataDir, 'local').find((x) => x.kind === 'tool_call' && x.operation === op));
  assert.equal(rec?.body.evidence[0].sha256, sha, JSON.stringify(rec?.body.evidence));
  // nothing changed since: the answer links that very screenshot, taken by the call before
  const same = await ok(gb.client, 'browser_evaluate', { function: '() => document.title' });
  const [again] = sc(same).evidence;
  assert.equal(again.unchanged, true, dump(same));
  assert.equal(again.sha256, sha, dump(same));
  assert.equal(again.taken_by, op, dump(same));
});
