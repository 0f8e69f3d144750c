/*
 * `glassbox mcp --secrets FILE`, Playwright MCP's flag, with real Chromium
 * and the MCP SDK client: a dotenv file's value is typed when
 * browser_type's text is its name, reaches the page (the login it posts
 * carries it), and never appears in an answer, a snapshot, the audit log,
 * the server's stderr or any file of the data dir; the code shows the
 * environment lookup in each language. A file others may write, or one
 * that cannot be read as NAME=value lines, is refused at start without
 * its content in the message.
 */
import { test, before, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert, openGlassbox, startFixtureServer, glassboxBin, newDataDir, REPO_ROOT, callTool, ok, sc,
  textOf, dump, evaluate, snapshot, findRef, filesContaining, auditText,
} from '../e2e/lib.mjs';

const POLICY = path.join(REPO_ROOT, 'fixtures', 'policy', 'secrets.json');
// Unique per run, so that a hit can only come from this test.
const VALUE = `pw ${crypto.randomBytes(9).toString('hex')}&/+`;
let fixture;
let dir;
let secretsFile;
const opened = [];

/* Starts glassbox with extra server flags. */
async function start(args) {
  const saved = process.env.GLASSBOX_ARGS;
  process.env.GLASSBOX_ARGS = args.join(' ');
  try {
    const gb = await openGlassbox({ config: POLICY });
    opened.push(gb);
    return gb;
  } finally {
    if (saved === undefined) delete process.env.GLASSBOX_ARGS;
    else process.env.GLASSBOX_ARGS = saved;
  }
}

/* `glassbox mcp ARGS` run to its end with no input: {status, stderr}. */
function mcpOnce(args) {
  const data = newDataDir();
  try {
    const r = spawnSync(glassboxBin(), ['mcp', ...args], {
      input: '', encoding: 'utf8', timeout: 60000,
      env: { ...process.env, GLASSBOX_DATA_DIR: data, GLASSBOX_CONFIG: POLICY },
    });
    assert.ok(!r.stderr.includes(VALUE), `stderr holds the value: ${r.stderr}`);
    return r;
  } finally {
    fs.rmSync(data, { recursive: true, force: true });
  }
}

function codeOf(result) {
  const m = /### Ran Playwright code\n```[a-z]*\n([\s\S]*?)\n```/.exec(textOf(result));
  return m ? m[1] : '';
}

before(async () => {
  fixture = await startFixtureServer();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-env-'));
  secretsFile = path.join(dir, 'secrets.env');
  fs.writeFileSync(secretsFile, `# the shop's login\nX-PASSWORD="${VALUE}"\nOTHER=unused\n`, { mode: 0o600 });
});

after(async () => {
  for (const gb of opened) {
    await gb.close().catch(() => {});
    gb.removeDataDir();
  }
  await fixture?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test('a --secrets value is typed by its name, reaches the page, and is in no answer, snapshot, audit record, log or file', async () => {
  const gb = await start(['--secrets', secretsFile]);
  const results = [];
  const keep = (r) => {
    results.push(r);
    return r;
  };
  keep(await ok(gb.client, 'browser_navigate', { url: `http://shop.test:${fixture.port}/secrets/login.html` }));
  const snap = await snapshot(gb.client);
  keep(snap.result);
  const field = findRef(snap, 'textbox', 'Password');
  const typed = keep(await callTool(gb.client, 'browser_type', { element: 'Password', target: field, text: 'X-PASSWORD' }));
  assert.ok(!typed.isError, dump(typed));
  assert.match(textOf(typed), /Typed secret X-PASSWORD into textbox "Password"/);
  assert.match(textOf(typed), /value re-read: matches the secret \(hidden\)/);
  assert.equal(sc(typed).secret, 'X-PASSWORD');
  assert.equal(codeOf(typed), `await page.locator('#password').fill(process.env['X-PASSWORD']);`);
  // the field holds it and the snapshot masks it
  const after = keep((await snapshot(gb.client)).result);
  assert.match(textOf(after), /textbox "Password" (\[active\] )?\[ref=e\d+\]: ••••/);
  // the page received the value itself: the login it posts carries it
  keep(await ok(gb.client, 'browser_press_key', { key: 'Enter' }));
  const hash = await evaluate(gb.client, `() => document.querySelector('meta[name=password-sha256]').content`);
  assert.equal(hash, crypto.createHash('sha256').update(VALUE).digest('hex'));
  // text that names no secret is typed as it is
  await ok(gb.client, 'browser_navigate', { url: `http://shop.test:${fixture.port}/secrets/login.html` });
  const snap2 = await snapshot(gb.client);
  const user = findRef(snap2, 'textbox', 'Username');
  const plain = keep(await ok(gb.client, 'browser_type', { element: 'Username', target: user, text: 'X-PASSWORDS' }));
  assert.match(textOf(plain), /value re-read: "X-PASSWORDS"/);
  await gb.close();

  const encoded = [VALUE, encodeURIComponent(VALUE), JSON.stringify(VALUE).slice(1, -1)];
  for (const r of results)
    for (const v of encoded) assert.ok(!JSON.stringify(r).includes(v), `an answer holds the value: ${dump(r)}`);
  for (const v of encoded) {
    assert.ok(!gb.stderr().includes(v), 'the server log holds the value');
    assert.ok(!auditText(gb.dataDir, 'local').includes(v), 'the audit log holds the value');
    assert.deepEqual(filesContaining(gb.dataDir, v), [], 'a file of the data dir holds the value');
  }
  assert.match(auditText(gb.dataDir, 'local'), /X-PASSWORD/, 'the audit record names the secret');
});

test('browser_fill_form types a --secrets value named as a field\'s value, as Playwright MCP does', async () => {
  const gb = await start(['--secrets', secretsFile]);
  await ok(gb.client, 'browser_navigate', { url: `http://shop.test:${fixture.port}/secrets/login.html` });
  const snap = await snapshot(gb.client);
  const r = await callTool(gb.client, 'browser_fill_form', { fields: [
    { name: 'Username', type: 'textbox', target: findRef(snap, 'textbox', 'Username'), value: 'alice' },
    { name: 'Password', type: 'textbox', target: findRef(snap, 'textbox', 'Password'), value: 'X-PASSWORD' },
  ] });
  assert.ok(!r.isError, dump(r));
  assert.match(codeOf(r), /\.fill\(process\.env\['X-PASSWORD'\]\);/);
  assert.match(codeOf(r), /\.fill\('alice'\);/);
  const pw = sc(r).fields.find((f) => f.name === 'Password');
  assert.equal(pw.expected, '[redacted]');
  assert.ok(!JSON.stringify(r).includes(VALUE), dump(r));
  await ok(gb.client, 'browser_press_key', { key: 'Enter' });
  const hash = await evaluate(gb.client, `() => document.querySelector('meta[name=password-sha256]').content`);
  assert.equal(hash, crypto.createHash('sha256').update(VALUE).digest('hex'));
  await gb.close();
  assert.ok(!gb.stderr().includes(VALUE));
  assert.deepEqual(filesContaining(gb.dataDir, VALUE), []);
});

test('the code shows the environment lookup in each language', async () => {
  for (const [lang, code] of [
    ['python', `page.locator("#password").fill(os.environ["X-PASSWORD"])`],
    ['java', `page.locator("#password").fill(System.getenv("X-PASSWORD"));`],
    ['csharp', `await page.Locator("#password").FillAsync(Environment.GetEnvironmentVariable("X-PASSWORD"));`],
  ]) {
    const gb = await start([`--codegen=${lang}`, '--secrets', secretsFile]);
    await ok(gb.client, 'browser_navigate', { url: `http://shop.test:${fixture.port}/secrets/login.html` });
    const field = findRef(await snapshot(gb.client), 'textbox', 'Password');
    const r = await ok(gb.client, 'browser_type', { element: 'Password', target: field, text: 'X-PASSWORD' });
    assert.equal(codeOf(r), code, dump(r));
    assert.match(textOf(r), new RegExp('```' + lang + '\\n'), 'the fence names the language');
    await gb.close();
  }
});

test('a --secrets file others may write, or that is not NAME=value lines, is refused without its content', () => {
  const writable = path.join(dir, 'writable.env');
  fs.writeFileSync(writable, `X=${VALUE}\n`);
  fs.chmodSync(writable, 0o662);
  let r = mcpOnce(['--secrets', writable]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /--secrets: .*writable\.env may be written by other users \(mode 0662\).*chmod 600 it/);

  const bad = path.join(dir, 'bad.env');
  fs.writeFileSync(bad, `OK=1\n${VALUE}\n`, { mode: 0o600 });
  r = mcpOnce(['--secrets', bad]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /bad\.env, line 2: it is not NAME=value/);

  const badName = path.join(dir, 'badname.env');
  fs.writeFileSync(badName, `9LIVES=${VALUE}\n`, { mode: 0o600 });
  r = mcpOnce(['--secrets', badName]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /badname\.env, line 1: the name must be/);

  const link = path.join(dir, 'link.env');
  fs.symlinkSync(secretsFile, link);
  r = mcpOnce(['--secrets', link]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /a symlink: name the file itself/);

  r = mcpOnce(['--secrets', path.join(dir, 'missing.env')]);
  assert.equal(r.status, 2, r.stderr);
  assert.match(r.stderr, /cannot open .*missing\.env: No such file/);

  // a file others may read is taken, with a warning
  const readable = path.join(dir, 'readable.env');
  fs.writeFileSync(readable, `X=${VALUE}\n`);
  fs.chmodSync(readable, 0o644);
  r = mcpOnce(['--secrets', readable]);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, /readable\.env may be read by other users: chmod 600 it/);
});
