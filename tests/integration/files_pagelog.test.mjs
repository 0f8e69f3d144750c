/*
 * What the page did, with real Chromium and the MCP SDK client:
 * browser_console_messages (levels, since the last navigation or all),
 * browser_network_requests (static toggle, filter) and
 * browser_network_request (headers and bodies; bodies as artifacts;
 * credential headers never shown); browser_pdf_save; browser_drop (files
 * of the upload area and data, checked on the page's drop event).
 */
import { test } from 'node:test';
import {
  assert,
  callTool,
  ok,
  sc,
  dump,
  textOf,
  evaluate,
  filesContaining,
  assertToolError,
  pollUntil,
} from '../e2e/lib.mjs';
import { FILES_COOKIE_SECRET } from '../../fixtures/files-routes.mjs';
import { useFilesSession, readResource, sha256 } from './files_helpers.mjs';

const BEARER = 'fx-token-91c2-do-not-show';
// browser_pdf_save is in the capability group pdf
const h = useFilesSession({
  prefix: 'glassbox-pagelog-',
  policy: { caps: ['pdf'] },
  files: { notes: { name: 'notes.txt', bytes: Buffer.from('dropped notes\n') } },
});
const url = h.url;

async function loadConsolePage() {
  await ok(h.client, 'browser_navigate', { url: url('/files/console.html') });
  await ok(h.client, 'browser_wait_for', { text: 'loaded' });
}

const texts = (r) => sc(r).messages.map((m) => `${m.level}:${m.text}`);

test('console messages at a level and above, since the last navigation', async () => {
  await loadConsolePage();
  let r = await ok(h.client, 'browser_console_messages', {});
  assert.deepEqual(texts(r), [
    'info:hello from the log 42',
    'info:some info',
    'warning:careful now',
    'error:bad thing happened',
  ]);
  assert.deepEqual(sc(r).console, { total: 5, errors: 1, warnings: 1, level: 'info', all: false });
  assert.match(textOf(r), /Total messages: 5 \(Errors: 1, Warnings: 1\)/);
  assert.match(textOf(r), /### Result\nTotal messages: 5 \(Errors: 1, Warnings: 1\)\nReturning 4 messages for level "info"\n\[LOG\] hello from the log 42 @ /, textOf(r));
  assert.match(textOf(r), /- page content: untrusted \[marker [0-9a-f]{16}\]/, 'console text is marked as page content');
  assert.equal(sc(r).page_content.marker, textOf(r).match(/\[marker ([0-9a-f]{16})\]/)[1]);
  r = await ok(h.client, 'browser_console_messages', { level: 'debug' });
  assert.equal(sc(r).messages.length, 5);
  assert.equal(sc(r).messages[4].text, 'debug detail');
  r = await ok(h.client, 'browser_console_messages', { level: 'error' });
  assert.deepEqual(texts(r), ['error:bad thing happened']);
  assert.match(sc(r).messages[0].url, /\/files\/console\.html$/);

  await ok(h.client, 'browser_click', { target: '#more' });
  r = await ok(h.client, 'browser_console_messages', { level: 'error' });
  assert.deepEqual(texts(r).slice(1, 2), ['error:clicked error']);
  assert.match(texts(r)[2], /^error:.*thrown after the click/);

  await ok(h.client, 'browser_navigate', { url: url('/form.html') });
  r = await ok(h.client, 'browser_console_messages', {});
  assert.deepEqual(sc(r).messages, [], 'a new page starts a new span');
  r = await ok(h.client, 'browser_console_messages', { all: true, level: 'error' });
  assert.ok(texts(r).includes('error:clicked error'), dump(r));

  r = await callTool(h.client, 'browser_console_messages', { level: 'loud' });
  assert.match(assertToolError(r), /level/);
});

test('network requests: fetches shown, static ones hidden unless asked, a filter', async () => {
  await loadConsolePage();
  let r = await ok(h.client, 'browser_network_requests', {});
  const urls = sc(r).requests.map((q) => `${q.method} ${new URL(q.url).pathname} ${q.status}`);
  assert.deepEqual(urls, ['GET /files/api/data 200', 'POST /files/api/echo 200']);
  assert.ok(sc(r).hidden_static >= 2, dump(r)); // the document, the image, the style sheet
  assert.match(textOf(r), /static requests? not shown, run with "static" option to see/);
  r = await ok(h.client, 'browser_network_requests', { static: true });
  const all = sc(r).requests.map((q) => new URL(q.url).pathname);
  assert.ok(all.includes('/files/console.html') && all.includes('/egress/ok/pixel.png'), dump(r));
  r = await ok(h.client, 'browser_network_requests', { filter: 'api/e.ho$' });
  assert.deepEqual(sc(r).requests.map((q) => new URL(q.url).pathname), ['/files/api/echo']);
  r = await callTool(h.client, 'browser_network_requests', { filter: '(' });
  assert.match(assertToolError(r), /is not a regular expression/);
});

test('one request: headers with credentials redacted, bodies as artifacts', async () => {
  await loadConsolePage();
  const list = sc(await ok(h.client, 'browser_network_requests', {})).requests;
  const data = list.find((q) => q.url.endsWith('/files/api/data'));
  const echo = list.find((q) => q.url.endsWith('/files/api/echo'));

  let r = await ok(h.client, 'browser_network_request', { index: data.index });
  const cookie = Object.entries(sc(r).request.response_headers).find(([k]) => k.toLowerCase() === 'set-cookie');
  assert.ok(!cookie || cookie[1] === '[redacted]', dump(r));
  assert.equal(sc(r).request.response_headers['x-fixture'] ?? sc(r).request.response_headers['X-Fixture'], 'files');
  const body = sc(r).response_body;
  assert.equal(body.mime, 'application/json');
  const bytes = await readResource(h.client, `glassbox://artifact/${body.sha256}`);
  assert.deepEqual(JSON.parse(bytes.toString('utf8')), { ok: true, items: ['alpha', 'beta'] });
  assert.ok(!JSON.stringify(r).includes(FILES_COOKIE_SECRET), 'the cookie value reached the model');

  r = await ok(h.client, 'browser_network_request', { index: echo.index, part: 'request-body' });
  assert.match(textOf(r), /\{"note":"posted body"\}/);
  r = await ok(h.client, 'browser_network_request', { index: echo.index, part: 'request-headers' });
  assert.match(textOf(r), /Authorization: \[redacted\]/i);
  assert.ok(!JSON.stringify(r).includes(BEARER), 'the bearer token reached the model');

  r = await callTool(h.client, 'browser_network_request', { index: 99999 });
  assert.match(assertToolError(r), /Request #99999 not found\. Use browser_network_requests to see available indexes/);

  // neither secret is kept anywhere: audit log, artifacts, logs
  assert.deepEqual(filesContaining(h.dataDir, FILES_COOKIE_SECRET), []);
  assert.deepEqual(filesContaining(h.dataDir, BEARER), []);
  assert.ok(!h.gb.stderr().includes(FILES_COOKIE_SECRET) && !h.gb.stderr().includes(BEARER));
});

test('browser_pdf_save keeps the page as a PDF artifact', async () => {
  await ok(h.client, 'browser_navigate', { url: url('/form.html') });
  const r = await ok(h.client, 'browser_pdf_save', { filename: 'form.pdf' });
  const pdf = sc(r).pdf;
  assert.equal(pdf.name, 'form.pdf');
  const bytes = await readResource(h.client, pdf.uri);
  assert.equal(bytes.subarray(0, 5).toString('latin1'), '%PDF-');
  assert.equal(sha256(bytes), pdf.sha256);
  assert.equal(bytes.length, pdf.size);
  assert.ok(r.content.some((c) => c.type === 'resource_link' && c.uri === pdf.uri), dump(r));
});

test('browser_drop: files of the upload area and data reach the drop zone as trusted drops', async () => {
  await ok(h.client, 'browser_navigate', { url: url('/files/drop.html') });
  const r = await ok(h.client, 'browser_drop', {
    target: '#zone',
    paths: ['notes.txt'],
    data: { 'text/plain': 'hello drop', 'text/uri-list': 'https://example.com/' },
  });
  const seen = await pollUntil(() => evaluate(h.client, '() => window.__dropped ?? null'));
  assert.equal(seen.trusted, true);
  assert.deepEqual(seen.files, [{ name: 'notes.txt', size: h.files.notes.bytes.length, sha256: h.files.notes.sha256 }]);
  assert.equal(seen.data['text/plain'], 'hello drop');
  assert.equal(sc(r).uploads[0].sha256, h.files.notes.sha256);

  // a drop the page does not take is not reported as done
  const miss = await callTool(h.client, 'browser_drop', { target: 'h1', data: { 'text/plain': 'x' } });
  assert.match(assertToolError(miss), /the drop did not reach/);
  const none = await callTool(h.client, 'browser_drop', { target: '#zone' });
  assert.match(assertToolError(none), /At least one of "paths" or "data" must be provided/);
  const host = await callTool(h.client, 'browser_drop', { target: '#zone', paths: ['/etc/hostname'] });
  assert.match(assertToolError(host), /is a path: files come only from the tenant's upload area/);
});

test('hostile arguments get precise errors, and the session keeps serving', async () => {
  await ok(h.client, 'browser_navigate', { url: url('/files/drop.html') });
  const cases = [
    ['browser_drop', { target: '#zone', paths: Array.from({ length: 17 }, () => 'notes.txt') }, /at most 16 files per call/],
    ['browser_drop', { target: '#zone', data: { 'text/plain': 5 } }, /data\["text\/plain"\] is not a string/],
    ['browser_drop', { target: '#zone', data: { 'not a type': 'x' } }, /is not a MIME type/],
    ['browser_drop', { target: '#zone', data: { 'text/plain': 'x'.repeat((1 << 20) + 1) } }, /larger than 1048576 bytes/],
    ['browser_network_requests', { filter: 'a'.repeat(600) }, /longer than 512 characters/],
    ['browser_network_request', { index: 0 }, /index/],
    ['browser_network_request', { index: 'one' }, /index/],
    ['browser_console_messages', { level: ['error'] }, /level/],
    ['browser_file_upload', { target: '#zone', paths: ['notes.txt'] }, /is not a file input/],
    ['browser_pdf_save', { filename: 7 }, /filename/],
  ];
  for (const [tool, args, re] of cases) {
    const r = await callTool(h.client, tool, args);
    assert.match(assertToolError(r, tool), re, `${tool} ${JSON.stringify(args).slice(0, 80)}`);
  }
  await ok(h.client, 'browser_console_messages', {});
});

test('a password typed into a login form never leaves with the request that carried it', async () => {
  const password = 'hunter2-Quartz-91';
  await ok(h.client, 'browser_navigate', { url: url('/secrets/login.html') });
  await ok(h.client, 'browser_type', { target: '#username', text: 'ada' });
  await ok(h.client, 'browser_type', { target: '#password', text: password });
  await ok(h.client, 'browser_click', { target: '#signin' });
  const list = sc(await ok(h.client, 'browser_network_requests', { static: true })).requests;
  const post = list.find((q) => q.method === 'POST' && q.url.endsWith('/secrets/login'));
  assert.ok(post, JSON.stringify(list));
  const r = await ok(h.client, 'browser_network_request', { index: post.index, part: 'request-body' });
  assert.match(textOf(r), /username=ada/);
  assert.match(textOf(r), /password=\[secret typed password\]/);
  assert.ok(!JSON.stringify(r).includes(password) && !JSON.stringify(r).includes(encodeURIComponent(password)));
  const body = await readResource(h.client, `glassbox://artifact/${sc(r).request_body.sha256}`);
  assert.ok(!body.toString('utf8').includes(password), 'the stored body holds the password');
  assert.deepEqual(filesContaining(h.dataDir, password), []);
});
