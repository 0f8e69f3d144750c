/*
 * The "### Events" of each answer, as Playwright MCP writes them, with real
 * Chromium and the MCP SDK client: the console messages since the last
 * answer written to a console-*.log file per page document in the output
 * directory (at --console-level and above, typed passwords scrubbed) and
 * pointed at by "- New console entries: FILE#Lfrom-Lto"; their number when
 * there is no output directory; downloads as "- Downloading file NAME ..."
 * and "- Downloaded file NAME to "PATH"", the file in the output directory
 * too; a file chooser opened by a click as "### Modal state", other page
 * actions refused until browser_file_upload answers it.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert,
  REPO_ROOT,
  openGlassbox,
  newDataDir,
  startFixtureServer,
  callTool,
  ok,
  sc,
  dump,
  textOf,
  assertToolError,
  evaluate,
} from '../e2e/lib.mjs';
import { filesBody } from '../../fixtures/files-routes.mjs';
import { putFile } from './files_helpers.mjs';

/* The sections of an answer, as Playwright MCP's parseResponse splits them. */
function sections(result) {
  const out = {};
  for (const part of textOf(result).split(/^### /m).slice(1)) {
    const nl = part.indexOf('\n');
    out[part.slice(0, nl)] = part.slice(nl + 1).trim();
  }
  return out;
}

const logs = (dir) => fs.readdirSync(dir).filter((f) => /^console-.+\.log$/.test(f)).sort();

/* The file and lines an Events section points at: {file, from, to}. */
function consoleLink(result) {
  const m = /- New console entries: (.+\.log)#L(\d+)(?:-L(\d+))?/.exec(sections(result).Events || '');
  assert.ok(m, `the answer points at new console entries:\n${textOf(result)}`);
  return { file: path.resolve(REPO_ROOT, m[1]), from: Number(m[2]), to: Number(m[3] || m[2]) };
}

/* Starts glassbox with extra server flags. */
async function start(args, opts = {}) {
  const saved = process.env.GLASSBOX_ARGS;
  process.env.GLASSBOX_ARGS = args.join(' ');
  try {
    return await openGlassbox(opts);
  } finally {
    if (saved === undefined) delete process.env.GLASSBOX_ARGS;
    else process.env.GLASSBOX_ARGS = saved;
  }
}

let site;
const open = [];
const dirs = [];
const tmp = (prefix) => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  dirs.push(d);
  return d;
};
const page = () => `${site.url}/files/events.html`;

before(async () => {
  site = await startFixtureServer();
});

after(async () => {
  for (const gb of open) {
    await gb.close();
    gb.removeDataDir();
  }
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  if (site) await site.close();
});

async function session(args, opts) {
  const gb = await start(args, opts);
  open.push(gb);
  return gb.client;
}

test('console messages go to a log file per page document; each answer points at the new lines', async () => {
  const out = tmp('glassbox-events-');
  const client = await session([`--output-dir=${out}`]);

  let r = await ok(client, 'browser_navigate', { url: page() });
  let link = consoleLink(r);
  assert.deepEqual(logs(out).map((f) => path.join(out, f)), [link.file]);
  assert.deepEqual([link.from, link.to], [1, 3], textOf(r));
  let lines = fs.readFileSync(link.file, 'utf8').split('\n').filter(Boolean);
  assert.equal(lines.length, 3, lines.join('\n'));
  assert.match(lines[0], new RegExp(`^\\[ *\\d+ms\\] \\[WARNING\\] careful at load @ ${page().replace(/[.?]/g, '\\$&')}:\\d+$`));
  assert.match(lines[1], /^\[ *\d+ms\] \[ERROR\] failed at load @ /);
  assert.match(lines[2], /^\[ *\d+ms\] \[LOG\] logged at load @ /);
  assert.ok(!lines.join('\n').includes('debug at load'), 'debug is below the default level (info)');
  // the page's text is in the file, not in the events
  assert.ok(!sections(r).Events.includes('failed at load'), textOf(r));

  // a click that logs: the next lines of the same file
  r = await ok(client, 'browser_click', { target: '#log' });
  link = consoleLink(r);
  assert.deepEqual([link.from, link.to], [4, 4], textOf(r));
  assert.match(fs.readFileSync(link.file, 'utf8').split('\n')[3], /\[ERROR\] clicked error @ /);

  // nothing new: no Events section
  r = await ok(client, 'browser_snapshot', {});
  assert.equal(sections(r).Events, undefined, textOf(r));

  // browser_evaluate's messages are written at once, without a snapshot
  r = await ok(client, 'browser_evaluate', { function: "() => { console.error('from a script'); return 1; }" });
  assert.match(fs.readFileSync(link.file, 'utf8'), /\[ERROR\] from a script/);
  assert.deepEqual([consoleLink(r).from, consoleLink(r).to], [5, 5], textOf(r));

  // a new document: a file of its own
  await ok(client, 'browser_navigate', { url: page() + '?again' });
  assert.equal(logs(out).length, 2, logs(out).join(', '));
  assert.match(fs.readFileSync(path.join(out, logs(out)[1]), 'utf8'), /careful at load @ .*\?again/);
  assert.ok(!fs.readFileSync(path.join(out, logs(out)[1]), 'utf8').includes('clicked error'));
});

test('--console-level keeps the messages at that level and above; browser_console_messages is not narrowed', async () => {
  const out = tmp('glassbox-events-level-');
  const client = await session([`--output-dir=${out}`, '--console-level', 'error']);
  const r = await ok(client, 'browser_navigate', { url: page() });
  const text = fs.readFileSync(consoleLink(r).file, 'utf8');
  assert.match(text, /\[ERROR\] failed at load/);
  assert.ok(!/careful at load|logged at load/.test(text), text);
  const all = await ok(client, 'browser_console_messages', { level: 'debug' });
  assert.match(sections(all).Result, /\[WARNING\] careful at load/);
});

test('browser_console_messages with a filename writes them into the output directory and links the file', async () => {
  const out = tmp('glassbox-events-file-');
  const client = await session([`--output-dir=${out}`]);
  await ok(client, 'browser_navigate', { url: page() });
  const r = await ok(client, 'browser_console_messages', { level: 'error', filename: 'messages.log' });
  assert.equal(sections(r).Result, `- [Console](${path.join(out, 'messages.log')})`, textOf(r));
  const text = fs.readFileSync(path.join(out, 'messages.log'), 'utf8');
  assert.match(text, /^Total messages: 4 \(Errors: 1, Warnings: 1\)\nReturning 1 messages for level "error"\n\[ERROR\] failed at load @ /);
  const bad = await callTool(client, 'browser_console_messages', { filename: '../escape.log' });
  assert.match(assertToolError(bad), /is not a plain file name/);
  assert.ok(!fs.existsSync(path.join(out, '..', 'escape.log')));
});

test('a bad --console-level is refused at start with what to give', async () => {
  await assert.rejects(start(['--console-level', 'loud']));
});

test('without an output directory the answer gives the number of new entries', async () => {
  const client = await session([]);
  const r = await ok(client, 'browser_navigate', { url: page() });
  assert.equal(sections(r).Events, '- New console entries: 3 (browser_console_messages lists them)', textOf(r));
});

test('a password typed into a field never reaches the log file, though the page logs it', async () => {
  const out = tmp('glassbox-events-pw-');
  const client = await session([`--output-dir=${out}`]);
  await ok(client, 'browser_navigate', { url: page() });
  const secret = 'Tr0ub4dor-and-3-more-words';
  await ok(client, 'browser_type', { target: '#pw', text: secret });
  const text = logs(out).map((f) => fs.readFileSync(path.join(out, f), 'utf8')).join('\n');
  assert.match(text, /the page saw: \[secret typed password\]/, text);
  assert.ok(!text.includes(secret), 'the typed password is in a console log file');
  assert.ok(!text.includes(secret.slice(0, 12)), 'a prefix of the typed password is in a console log file');
});

test('a download is an event, and its file is in the output directory too', async () => {
  const out = tmp('glassbox-events-dl-');
  const client = await session([`--output-dir=${out}`]);
  await ok(client, 'browser_navigate', { url: page() });
  let r = await ok(client, 'browser_click', { target: '#report' });
  let events = sections(r).Events || '';
  if (!events.includes('Downloaded')) events += '\n' + (sections(await ok(client, 'browser_snapshot', {})).Events || '');
  assert.match(events, new RegExp(`- Downloading file report\\.pdf \\.\\.\\.\\n- Downloaded file report\\.pdf to "${out.replace(/[.]/g, '\\.')}/report\\.pdf"`), events);
  assert.deepEqual(fs.readFileSync(path.join(out, 'report.pdf')), filesBody('report.pdf', 2000));
  // still an artifact of the click, as without an output directory
  assert.equal(sc(r).downloads?.[0]?.state ?? 'completed', 'completed', dump(r));

  // a URL that is a file: the navigation is its download, the page stays
  const before = (await ok(client, 'browser_snapshot', {})).structuredContent.url;
  r = await ok(client, 'browser_navigate', { url: `${site.url}/files/download/notes.txt?size=64` });
  assert.equal(sc(r).navigation, 'download', dump(r));
  assert.match(sections(r).Events, /- Downloading file notes\.txt \.\.\.\n- Downloaded file notes\.txt to "/, textOf(r));
  assert.match(sections(r).Verification, /it is a download \(the page stays as it was\)/);
  assert.equal(sections(r).Page.split('\n')[0], `- Page URL: ${page()}`);
  assert.deepEqual(fs.readFileSync(path.join(out, 'notes.txt')), filesBody('notes.txt', 64));
  assert.ok(before === undefined || before === page(), before);
});

test('a URL that is a download the policy refuses fails the navigation, and says so', async () => {
  const dataDir = newDataDir('glassbox-events-nodl-');
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
  policy.files = { downloads: false };
  const config = path.join(dataDir, 'policy.json');
  fs.writeFileSync(config, JSON.stringify(policy));
  const client = await session([], { dataDir, config });
  const r = await callTool(client, 'browser_navigate', { url: `${site.url}/files/download/notes.txt?size=64` });
  assert.match(assertToolError(r), /is a download, and it was refused/);
  assert.equal(sc(r).error.code, 'download_refused');
  assert.match(sections(r).Events, /- Download of file notes\.txt did not complete: refused \(this tenant's policy refuses downloads/);
});

test('a file chooser is a modal state: other page actions are refused until browser_file_upload answers it', async () => {
  const dataDir = newDataDir('glassbox-events-chooser-');
  putFile(dataDir, 'invoice.pdf', Buffer.from('%PDF-1.4\nan invoice\n'));
  const client = await session([], { dataDir });
  await ok(client, 'browser_navigate', { url: page() });

  let r = await ok(client, 'browser_click', { target: '#doc' });
  assert.equal(sections(r)['Modal state'], '- [File chooser]: can be handled by browser_file_upload', textOf(r));

  r = await callTool(client, 'browser_click', { target: '#log' });
  assertToolError(r);
  assert.equal(sections(r).Error, 'Error: Tool "browser_click" does not handle the modal state.', textOf(r));
  assert.equal(sections(r)['Modal state'], '- [File chooser]: can be handled by browser_file_upload');
  assert.equal(sc(r).error.code, 'modal_state');
  assert.match(sections(r).Verification, /a file chooser is open: answer it with browser_file_upload/);

  // uploads still come only from the upload area
  r = await callTool(client, 'browser_file_upload', { paths: ['/etc/hostname'] });
  assert.match(assertToolError(r), /is a path: files come only from the tenant's upload area/);
  assert.equal(sections(r)['Modal state'], '- [File chooser]: can be handled by browser_file_upload');

  r = await ok(client, 'browser_file_upload', { paths: ['invoice.pdf'] });
  assert.equal(sections(r)['Modal state'], undefined, textOf(r));
  assert.match(sections(r)['Ran Playwright code'], /await fileChooser\.setFiles\(\["invoice\.pdf"\]\)/);
  assert.equal(await evaluate(client, "() => document.getElementById('doc').files[0].name"), 'invoice.pdf');
  r = await ok(client, 'browser_click', { target: '#log' });
  assert.equal(sections(r)['Modal state'], undefined);

  // cancelled by browser_file_upload without paths; a navigation takes the chooser with its page
  await ok(client, 'browser_click', { target: '#doc' });
  r = await ok(client, 'browser_file_upload', {});
  assert.equal(sections(r)['Modal state'], undefined, textOf(r));
  await ok(client, 'browser_click', { target: '#doc' });
  r = await ok(client, 'browser_navigate', { url: page() });
  assert.equal(sections(r)['Modal state'], undefined, textOf(r));
  await ok(client, 'browser_click', { target: '#log' });
});
