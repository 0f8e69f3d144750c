/*
 * Downloads with real Chromium and the MCP SDK client: a download a page
 * starts lands in the session's download area only, is hashed, MIME
 * sniffed and kept as an artifact of the action that caused it; the
 * action's result reports it (name, size, sha256, uri, url), resources/read
 * serves the same bytes, and the audit log has its receipt.
 */
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assert, useGlassbox, ok, sc, dump, textOf, listFiles, pollUntil } from '../e2e/lib.mjs';
import { filesBody } from '../../fixtures/files-routes.mjs';
import { sha256, readResource, recordsOf, auditVerify } from './files_helpers.mjs';

const h = useGlassbox();
const homeDownloads = path.join(os.homedir(), 'Downloads');
const listHome = () => (fs.existsSync(homeDownloads) ? fs.readdirSync(homeDownloads) : []);

test('a download started by a click is an artifact of that click, reported in its result', async () => {
  const homeBefore = listHome();
  await ok(h.client, 'browser_navigate', { url: h.url('/files/download.html?size=50000') });
  const r = await ok(h.client, 'browser_click', { target: '#report' });
  const d = sc(r).downloads;
  assert.ok(Array.isArray(d) && d.length === 1, dump(r));
  const want = filesBody('report.pdf', 50000);
  assert.equal(d[0].state, 'completed');
  assert.equal(d[0].name, 'report.pdf');
  assert.equal(d[0].size, want.length);
  assert.equal(d[0].sha256, sha256(want));
  assert.equal(d[0].mime, 'application/pdf');
  assert.equal(d[0].url, h.url('/files/download/report.pdf?size=50000'));
  assert.equal(d[0].operation_id, sc(r).operation_id);
  assert.equal(d[0].uri, `glassbox://artifact/${sha256(want)}`);
  assert.match(textOf(r), /download completed: report\.pdf \(50000 bytes, application\/pdf/);

  const bytes = await readResource(h.client, d[0].uri);
  assert.equal(sha256(bytes), sha256(want));

  // the receipt names the artifact and the operation; the chain verifies
  const rec = await pollUntil(() => recordsOf(h.gb.dataDir, 'download').find((x) => x.operation === sc(r).operation_id));
  assert.ok(rec, 'no download receipt');
  assert.equal(rec.body.url, d[0].url);
  assert.equal(rec.artifacts[0].sha256, d[0].sha256);
  assert.match(auditVerify(h.gb.dataDir), /chain verified/);

  // nothing landed outside the session's area: not in the default
  // Downloads dir, and the area's own copy is gone once kept
  assert.deepEqual(listHome(), homeBefore);
  const named = listFiles(h.gb.dataDir).filter((f) => path.basename(f) === 'report.pdf');
  assert.deepEqual(named, [], 'a file named as the page suggested was written');
});

test('a download of data the page made (<a download> of a blob) is kept too, and reported once', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/files/download.html') });
  const r = await ok(h.client, 'browser_click', { target: '#notes' });
  let d = sc(r).downloads || [];
  if (!d.length) d = sc(await ok(h.client, 'browser_snapshot', {})).downloads || []; // a late one comes with the next call
  assert.equal(d.length, 1, dump(r));
  assert.equal(d[0].name, 'notes.txt');
  assert.equal(d[0].state, 'completed');
  assert.equal(d[0].mime, 'text/plain');
  assert.equal(d[0].operation_id, sc(r).operation_id, 'the download belongs to the click');
  assert.equal((await readResource(h.client, d[0].uri)).toString('utf8'), 'notes of the day\n');
  const again = await ok(h.client, 'browser_snapshot', {});
  assert.equal(sc(again).downloads, undefined, 'a download is reported once');
});

test('after browser_close, the next browser downloads into its own area too', async () => {
  await ok(h.client, 'browser_close', {});
  await ok(h.client, 'browser_navigate', { url: h.url('/files/download.html?size=1234') });
  const r = await ok(h.client, 'browser_click', { target: '#report' });
  let d = sc(r).downloads || [];
  if (!d.length) d = sc(await ok(h.client, 'browser_snapshot', {})).downloads || [];
  assert.equal(d.length, 1, dump(r));
  assert.equal(d[0].state, 'completed');
  assert.equal(d[0].sha256, sha256(filesBody('report.pdf', 1234)));
});

test('a download the page starts later belongs to the last call that acted, and comes with the next result', async () => {
  const nav = await ok(h.client, 'browser_navigate', { url: h.url('/files/download.html?size=777&later=1500') });
  assert.equal((sc(nav).downloads || []).length, 0, dump(nav));
  await new Promise((r) => setTimeout(r, 2500));
  const d = await pollUntil(async () => {
    const r = await ok(h.client, 'browser_console_messages', {}); // any call reads the browser's events
    return (sc(r).downloads || []).find((x) => x.state === 'completed');
  });
  assert.ok(d, 'the later download was not reported');
  assert.equal(d.operation_id, sc(nav).operation_id, 'it belongs to the navigation that loaded the page');
  assert.equal(d.sha256, sha256(filesBody('report.pdf', 777)));
});
