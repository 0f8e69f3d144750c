/*
 * The egress drills of the files tools (docs/egress.md), with every layer
 * on, then with the Fetch layer alone and with the proxy alone (each
 * must hold by itself): a file uploaded reaches the allowed server with
 * the same sha256; a form that would send it to a denied host never
 * reaches that host; a download from a denied host never starts. The
 * denied server sees no request and no connection at all.
 */
import { test, after, describe } from 'node:test';
import { assert, ok, sc, dump } from '../e2e/lib.mjs';
import { useDrill, drillLog, LAYER_SETS } from './egress-drills.mjs';
import { putFile } from './files_helpers.mjs';

function drills(layers) {
  const run = useDrill({ layers });
  let file = null;
  const put = () => file || (file = putFile(run.gb.dataDir, 'invoice.pdf', Buffer.from('%PDF-1.4\ninvoice 2026-11\n')));

  after(() => {
    // checked last: nothing of any drill reached the denied server
    assert.deepEqual(run.denied.hits().requests, {}, 'the denied server saw a request');
    assert.equal(run.denied.connections(), 0, 'the denied server saw a connection');
  });

  test('an upload under these layers reaches the allowed server with the same sha256', async () => {
    put();
    await ok(run.client, 'browser_navigate', { url: run.shop('/files/upload.html') });
    await ok(run.client, 'browser_click', { target: '#doc' });
    await ok(run.client, 'browser_file_upload', { paths: ['invoice.pdf'] });
    await ok(run.client, 'browser_click', { target: '#send' });
    const got = run.allowed.uploads().filter((u) => u.field === 'doc');
    assert.equal(got.length, 1, JSON.stringify(got));
    assert.equal(got[0].sha256, put().sha256);
  });

  test('a form that would send the file to a denied host does not reach it', async () => {
    put();
    const log = drillLog(run);
    const before = run.allowed.uploads().length;
    await log.call('browser_navigate', { url: run.shop(`/files/upload.html?to=${encodeURIComponent(run.evil('/files/upload'))}`) });
    await log.call('browser_click', { target: '#doc' });
    const up = await log.call('browser_file_upload', { paths: ['invoice.pdf'] });
    assert.equal(sc(up).ok, true, dump(up));
    await log.call('browser_click', { target: '#send' });
    await log.drainUntil((l) => l.blocked.some((b) => (b.url || '').includes('/files/upload')));
    assert.ok(log.blocked.some((b) => (b.url || '').startsWith(run.evil('/files/upload'))), JSON.stringify(log.blocked));
    assert.equal(run.allowed.uploads().length, before);
  });

  test('a download from a denied host never starts', async () => {
    const log = drillLog(run);
    const from = run.evil('/files/download/leak.bin?size=4096');
    await log.call('browser_navigate', { url: run.shop(`/files/download.html?from=${encodeURIComponent(from)}`) });
    await log.call('browser_click', { target: '#from' });
    await log.drainUntil((l) => l.blocked.some((b) => (b.url || '').includes('/files/download/leak.bin')));
    assert.ok(log.blocked.some((b) => (b.url || '').startsWith(run.evil('/files/download/'))), JSON.stringify(log.blocked));
    const downloads = log.results.flatMap((r) => sc(r).downloads || []);
    assert.deepEqual(downloads.filter((d) => d.state === 'completed'), [], JSON.stringify(downloads));
  });
}

for (const set of ['all', 'fetch', 'proxy']) describe(`layers: ${set}`, () => drills(LAYER_SETS[set]));
