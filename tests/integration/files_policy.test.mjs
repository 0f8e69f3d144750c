/*
 * The policy of the files tools, with real Chromium and the MCP SDK
 * client: a risk rule forbids uploads on one host (kind "upload",
 * page_host) and holds drops for approval, while another host takes them;
 * files.download_max_mb cancels a download that grows past it;
 * files.uploads / files.downloads false refuse both. A refused action
 * leaves the page and the server untouched.
 */
import { test, after, describe } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert,
  callTool,
  ok,
  sc,
  dump,
  evaluate,
  assertToolError,
  pollUntil,
} from '../e2e/lib.mjs';
import { assertApprovalRequired, decide } from './gates_helpers.mjs';
import { useFilesSession, putFile, recordsOf, sha256 } from './files_helpers.mjs';

/* A glassbox on the loopback policy with extra settings (risk rules, files). */
const useSession = (extra) =>
  useFilesSession({
    prefix: 'glassbox-files-policy-',
    policy: extra,
    files: { invoice: { name: 'invoice.pdf', bytes: Buffer.from('%PDF-1.4\nthe invoice\n') } },
  });

const chosen = (client) => evaluate(client, "() => document.getElementById('doc').files.length");

describe('risk rules and download limits', () => {
  const s = useSession({
    risk: {
      evaluate: 'allow',
      defaults: false,
      rules: [
        { name: 'no-uploads-on-loopback', decision: 'forbid', when: { kind: 'upload', page_host: '127.0.0.1' } },
        { name: 'drops-need-a-person', decision: 'approve', when: { kind: 'upload', page_host: 'shop.test', tag: 'div' } },
      ],
    },
    files: { download_max_mb: 1 },
  });
  const shop = (p) => `http://shop.test:${s.fixture.port}${p}`;

  test('an upload on a host a rule forbids is refused before the file is set; another host takes it', async () => {
    await ok(s.client, 'browser_navigate', { url: s.fixture.url + '/files/upload.html' });
    await ok(s.client, 'browser_click', { target: '#doc' });
    const r = await callTool(s.client, 'browser_file_upload', { paths: ['invoice.pdf'] });
    assertToolError(r);
    assert.equal(sc(r).error.code, 'forbidden', dump(r));
    assert.match(JSON.stringify(sc(r)), /no-uploads-on-loopback/);
    assert.equal(await chosen(s.client), 0, 'a forbidden upload set a file');
    assert.equal(recordsOf(s.dataDir, 'upload').length, 0);

    await ok(s.client, 'browser_navigate', { url: shop('/files/upload.html') });
    await ok(s.client, 'browser_click', { target: '#doc' });
    await ok(s.client, 'browser_file_upload', { paths: ['invoice.pdf'] });
    assert.equal(await chosen(s.client), 1);
  });

  test('a drop a rule holds for approval does not reach the page; its approval is bound to the files', async () => {
    putFile(s.dataDir, 'other.pdf', Buffer.from('%PDF-1.4\nanother file\n'));
    await ok(s.client, 'browser_navigate', { url: shop('/files/drop.html') });
    const r = await callTool(s.client, 'browser_drop', { target: '#zone', paths: ['invoice.pdf'] });
    const g = assertApprovalRequired(r, 'the drop');
    assert.equal(await evaluate(s.client, '() => window.__dropped ?? null'), null);
    await decide(s.dataDir, 'approve', g.approval_id);

    // the approval is for invoice.pdf: another file is another action
    const other = await callTool(s.client, 'browser_drop', { target: '#zone', paths: ['other.pdf'], approval: g.approval_id });
    assert.equal(other.isError, true, dump(other));
    assert.equal(await evaluate(s.client, '() => window.__dropped ?? null'), null);

    const done = await ok(s.client, 'browser_drop', { target: '#zone', paths: ['invoice.pdf'], approval: g.approval_id });
    assert.equal(sc(done).approval.id, g.approval_id);
    const seen = await pollUntil(() => evaluate(s.client, '() => window.__dropped ?? null'));
    assert.equal(seen.files[0].name, 'invoice.pdf');
  });

  test('a download larger than files.download_max_mb is cancelled and not kept', async () => {
    await ok(s.client, 'browser_navigate', { url: s.fixture.url + `/files/download.html?size=${3 * 1024 * 1024}` });
    const r = await ok(s.client, 'browser_click', { target: '#report' });
    let d = sc(r).downloads || [];
    if (!d.length) d = sc(await ok(s.client, 'browser_snapshot', {})).downloads || [];
    assert.equal(d.length, 1, dump(r));
    assert.equal(d[0].state, 'too_large');
    assert.match(d[0].reason, /larger than this tenant's limit of 1 MiB \(files.download_max_mb\)/);
    assert.equal(d[0].sha256, undefined);
    const rec = await pollUntil(() => recordsOf(s.dataDir, 'download').find((x) => x.body.state === 'too_large'));
    assert.ok(rec, 'no receipt for the cancelled download');
    assert.deepEqual(rec.artifacts ?? [], []);
  });
});

describe('files.uploads and files.downloads false', () => {
  const s = useSession({ files: { uploads: false, downloads: false } });

  test('an upload is refused, and says which setting refuses it', async () => {
    await ok(s.client, 'browser_navigate', { url: s.fixture.url + '/files/upload.html' });
    await ok(s.client, 'browser_click', { target: '#doc' });
    const r = await callTool(s.client, 'browser_file_upload', { paths: ['invoice.pdf'] });
    assert.match(assertToolError(r), /refuses uploads \(files.uploads is false\)/);
    assert.equal(sc(r).error.code, 'uploads_refused');
    assert.equal(await chosen(s.client), 0);
  });

  test('a download is refused and nothing is kept', async () => {
    await ok(s.client, 'browser_navigate', { url: s.fixture.url + '/files/download.html' });
    const r = await ok(s.client, 'browser_click', { target: '#report' });
    let d = sc(r).downloads || [];
    if (!d.length) d = sc(await ok(s.client, 'browser_snapshot', {})).downloads || [];
    assert.equal(d.length, 1, dump(r));
    assert.equal(d[0].state, 'refused');
    assert.match(d[0].reason, /files.downloads is false/);
  });
});

describe('files.upload_dirs: a configured dir, by path', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-upload-dir-'));
  const outside = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-outside-'));
  const s = useSession({ files: { upload_dirs: [dir] } });
  after(() => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(outside, { recursive: true, force: true });
  });

  test('a file under the dir is uploaded by its path, hashed and recorded; nothing outside it is', async () => {
    const bytes = Buffer.from('%PDF-1.4\nfrom the invoices dir\n');
    fs.writeFileSync(path.join(dir, 'march.pdf'), bytes);
    fs.writeFileSync(path.join(outside, 'secret.txt'), 'not for the page');
    fs.symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'link.txt'));

    await ok(s.client, 'browser_navigate', { url: s.fixture.url + '/files/upload.html' });
    await ok(s.client, 'browser_click', { target: '#doc' });
    for (const p of [path.join(outside, 'secret.txt'), path.join(dir, 'link.txt'), path.join(dir, '..', path.basename(outside), 'secret.txt')]) {
      const r = await callTool(s.client, 'browser_file_upload', { paths: [p] });
      assert.match(assertToolError(r), /is not inside a dir of the policy's files.upload_dirs/, p);
    }
    assert.equal(await chosen(s.client), 0);
    const r = await ok(s.client, 'browser_file_upload', { paths: [path.join(dir, 'march.pdf')] });
    assert.equal(sc(r).uploads[0].name, 'march.pdf');
    assert.equal(sc(r).uploads[0].sha256, sha256(bytes));
    await ok(s.client, 'browser_click', { target: '#send' });
    const got = s.fixture.uploads().filter((u) => u.field === 'doc');
    assert.equal(got[0].sha256, sha256(bytes));
    const rec = await pollUntil(() => recordsOf(s.dataDir, 'upload').find((x) => x.operation === sc(r).operation_id));
    assert.equal(rec.artifacts[0].sha256, sha256(bytes));
  });
});
