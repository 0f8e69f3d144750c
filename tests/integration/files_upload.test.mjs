/*
 * browser_file_upload with real Chromium and the MCP SDK client: files
 * from the tenant's upload area (put with `glassbox files put`) reach the
 * fixture server in a real multipart POST with the same sha256; the input
 * is read back; host paths, unknown names and inputs that are not open
 * are refused with what to do; each upload is named in the audit log.
 */
import { test } from 'node:test';
import crypto from 'node:crypto';
import {
  assert,
  callTool,
  ok,
  sc,
  dump,
  textOf,
  evaluate,
  assertToolError,
  pollUntil,
} from '../e2e/lib.mjs';
import { useFilesSession, recordsOf, auditVerify } from './files_helpers.mjs';

const h = useFilesSession({
  prefix: 'glassbox-files-',
  files: {
    invoice: { name: 'invoice.pdf', bytes: Buffer.concat([Buffer.from('%PDF-1.4\n'), crypto.randomBytes(30000)]) },
    a: { name: 'a.txt', bytes: Buffer.from('first attachment\n') },
    b: { name: 'b.csv', bytes: Buffer.from('id,total\n1,9.99\n') },
  },
});
const url = h.url;

const chosen = () => evaluate(h.client, "() => Array.from(document.getElementById('doc').files, (f) => f.name)");

test('a file from the upload area reaches the server in a real multipart POST with the same sha256', async () => {
  await ok(h.client, 'browser_navigate', { url: url('/files/upload.html') });
  await ok(h.client, 'browser_click', { target: '#doc' }); // opens the (intercepted) chooser
  const r = await ok(h.client, 'browser_file_upload', { paths: ['invoice.pdf'] });
  const up = sc(r).uploads;
  assert.equal(up.length, 1, dump(r));
  assert.equal(up[0].name, 'invoice.pdf');
  assert.equal(up[0].size, h.files.invoice.bytes.length);
  assert.equal(up[0].sha256, h.files.invoice.sha256);
  assert.equal(up[0].mime, 'application/pdf');
  assert.deepEqual(await chosen(), ['invoice.pdf']);

  await ok(h.client, 'browser_click', { target: '#send' });
  const got = h.fixture.uploads().filter((u) => u.field === 'doc');
  assert.equal(got.length, 1, JSON.stringify(h.fixture.uploads()));
  assert.equal(got[0].name, 'invoice.pdf');
  assert.equal(got[0].size, h.files.invoice.bytes.length);
  assert.equal(got[0].sha256, h.files.invoice.sha256, 'the server received other bytes');

  // the audit log names the upload's artifact, and the chain verifies
  const rec = await pollUntil(() => recordsOf(h.dataDir, 'upload').find((x) => x.operation === sc(r).operation_id));
  assert.ok(rec, 'no upload record for the call');
  assert.equal(rec.body.how, 'file_chooser');
  assert.equal(rec.artifacts[0].sha256, h.files.invoice.sha256);
  assert.match(auditVerify(h.dataDir), /chain verified/);
});

test('several files go to a multiple input named by target, by name or resource URI', async () => {
  await ok(h.client, 'browser_navigate', { url: url('/files/upload.html') });
  const r = await ok(h.client, 'browser_file_upload', { target: '#docs', paths: ['a.txt', 'glassbox://upload/b.csv'] });
  assert.deepEqual(sc(r).uploads.map((u) => u.sha256), [h.files.a.sha256, h.files.b.sha256]);
  assert.equal(
    await evaluate(h.client, "() => document.getElementById('chosen').textContent"),
    `docs: a.txt (${h.files.a.bytes.length}), b.csv (${h.files.b.bytes.length})`,
  );
  const before = h.fixture.uploads().length;
  await ok(h.client, 'browser_click', { target: '#send' });
  const got = h.fixture.uploads().slice(before).filter((u) => u.field === 'docs');
  assert.deepEqual(got.map((u) => [u.field, u.name, u.sha256]), [
    ['docs', 'a.txt', h.files.a.sha256],
    ['docs', 'b.csv', h.files.b.sha256],
  ]);
});

test('a host path, an unknown name, a missing chooser and too many files are refused with what to do', async () => {
  await ok(h.client, 'browser_navigate', { url: url('/files/upload.html') });
  let r = await callTool(h.client, 'browser_file_upload', { paths: ['invoice.pdf'] });
  assert.match(assertToolError(r), /The tool "browser_file_upload" can only be used when there is related modal state present\. No file chooser is open: click the file input/);
  assert.equal(sc(r).error.code, 'no_file_chooser');

  await ok(h.client, 'browser_click', { target: '#doc' });
  r = await callTool(h.client, 'browser_file_upload', { paths: ['/etc/passwd'] });
  assert.match(assertToolError(r), /is a path: files come only from the tenant's upload area.*glassbox files put/);
  r = await callTool(h.client, 'browser_file_upload', { paths: ['../keys/audit.key'] });
  assert.equal(sc(r).error.code, 'bad_arguments', dump(r));
  r = await callTool(h.client, 'browser_file_upload', { paths: ['nothing-here.pdf'] });
  assert.match(assertToolError(r), /no file 'nothing-here.pdf' in the upload area of tenant local: put it there/);
  r = await callTool(h.client, 'browser_file_upload', { paths: ['a.txt', 'b.csv'] });
  assert.match(assertToolError(r), /takes one file, and 2 were given/);
  assert.deepEqual(await chosen(), [], 'a refused upload set nothing');

  // the chooser is still open: a good call now sets the file
  r = await ok(h.client, 'browser_file_upload', { paths: ['a.txt'] });
  assert.deepEqual(await chosen(), ['a.txt']);
  assert.match(textOf(r), /Set 1 file on the file input whose chooser is open/);
});

test('no paths dismisses the chooser; a target that is not a file input is refused', async () => {
  await ok(h.client, 'browser_navigate', { url: url('/files/upload.html') });
  await ok(h.client, 'browser_click', { target: '#doc' });
  await ok(h.client, 'browser_file_upload', {});
  let r = await callTool(h.client, 'browser_file_upload', { paths: ['a.txt'] });
  assert.equal(sc(r).error.code, 'no_file_chooser', dump(r));
  r = await callTool(h.client, 'browser_file_upload', { target: '#send', paths: ['a.txt'] });
  assert.match(assertToolError(r), /is not a file input/);
});

test('the upload area is listed as MCP resources, read back by URI, and its URIs upload', async () => {
  const list = await h.client.listResources();
  const names = list.resources.map((r) => r.name).sort();
  assert.deepEqual(names, ['a.txt', 'b.csv', 'invoice.pdf']);
  const inv = list.resources.find((r) => r.name === 'invoice.pdf');
  assert.equal(inv.uri, 'glassbox://upload/invoice.pdf');
  assert.equal(inv.mimeType, 'application/pdf');
  const read = await h.client.readResource({ uri: inv.uri });
  assert.equal(Buffer.from(read.contents[0].blob, 'base64').equals(h.files.invoice.bytes), true);
  const templates = await h.client.listResourceTemplates();
  assert.ok(templates.resourceTemplates.some((t) => t.uriTemplate === 'glassbox://upload/{name}'));
  await assert.rejects(h.client.readResource({ uri: 'glassbox://upload/../keys/audit.key' }), /not a file name of the upload area/);

  await ok(h.client, 'browser_navigate', { url: url('/files/upload.html') });
  await ok(h.client, 'browser_click', { target: '#doc' });
  await ok(h.client, 'browser_file_upload', { paths: [inv.uri] });
  assert.deepEqual(await chosen(), ['invoice.pdf']);
});
