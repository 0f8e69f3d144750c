/*
 * Playwright MCP compatibility, through real Chromium and the MCP SDK
 * client: every action's answer carries the page snapshot with refs usable
 * at once (snapshot_mode full | changed | none), refs numbered as
 * Playwright numbers them, answers in Playwright MCP's layout with the
 * Playwright code each action ran (also in its audit record), Playwright
 * MCP's server options honoured or refused with the reason, data: URLs
 * only when the policy allows them.
 */
import { test, before, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert,
  openGlassbox,
  startFixtureServer,
  callTool,
  textOf,
  sc,
  ok,
  parseSnapshot,
  auditRecords,
  glassboxBin,
  newDataDir,
  REPO_ROOT,
} from '../e2e/lib.mjs';

/* The sections of an answer, as Playwright MCP's parseResponse splits them. */
function sections(result) {
  const out = {};
  for (const part of textOf(result).split(/^### /m).slice(1)) {
    const nl = part.indexOf('\n');
    out[part.slice(0, nl)] = part.slice(nl + 1).trim();
  }
  return out;
}

/* The snapshot of an answer: inline, or in the file it links (with an
 * output dir, as Playwright MCP does), the path relative to glassbox's cwd. */
function snapshotOf(result) {
  const s = sections(result).Snapshot;
  assert.ok(s, `the answer carries a snapshot:\n${textOf(result)}`);
  const link = /^- \[Snapshot\]\(([^)]+)\)$/.exec(s);
  if (link) return fs.readFileSync(path.resolve(REPO_ROOT, link[1]), 'utf8');
  return s.replace(/^```yaml\n?/, '').replace(/\n?```$/, '');
}

function codeOf(result) {
  return (sections(result)['Ran Playwright code'] || '').replace(/^```js\n/, '').replace(/\n```$/, '');
}

/* Starts glassbox with extra server flags (and a policy file). */
async function start(args, config) {
  const saved = process.env.GLASSBOX_ARGS;
  process.env.GLASSBOX_ARGS = args.join(' ');
  try {
    return await openGlassbox(config ? { config } : {});
  } finally {
    if (saved === undefined) delete process.env.GLASSBOX_ARGS;
    else process.env.GLASSBOX_ARGS = saved;
  }
}

let site;
let full; /* snapshot_mode full (the default), test ids in data-tid, an output dir */
let changed; /* snapshot_mode changed */
let outDir;
let policyWithData;

before(async () => {
  site = await startFixtureServer();
  outDir = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-out-'));
  const loopback = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
  policyWithData = path.join(outDir, '..', `${path.basename(outDir)}-policy.json`);
  fs.writeFileSync(policyWithData, JSON.stringify({ ...loopback, allow_data_urls: true }));
  full = await start(['--test-id-attribute', 'data-tid', `--output-dir=${outDir}`], policyWithData);
  changed = await start(['--snapshot-mode=changed']);
});

after(async () => {
  for (const g of [full, changed]) {
    if (!g) continue;
    await g.close();
    g.removeDataDir();
  }
  if (site) await site.close();
  fs.rmSync(outDir, { recursive: true, force: true });
  fs.rmSync(policyWithData, { force: true });
});

test('the navigate answer carries the snapshot in Playwright shape, and its refs work at once', async () => {
  const nav = await ok(full.client, 'browser_navigate', { url: site.url + '/compat.html' });
  const s = sections(nav);
  /* with an output dir, in a file there, as Playwright MCP does */
  const file = /^- \[Snapshot\]\((.+\/page-[0-9T-]+Z\.yml)\)$/.exec(s.Snapshot);
  assert.ok(file && path.dirname(file[1]) === outDir, `linked from the output dir: ${s.Snapshot}`);
  assert.equal(codeOf(nav), `await page.goto('${site.url}/compat.html');`);
  assert.equal(s.Page, `- Page URL: ${site.url}/compat.html\n- Page Title: Compat`);
  const yaml = snapshotOf(nav);
  assert.match(yaml, /^- generic \[active\] \[ref=e1\]:\n  - heading "Compat" \[level=1\] \[ref=e2\]\n/);
  /* e1, e2, ... in document order */
  const refs = parseSnapshot(yaml).map((n) => Number(n.ref.slice(1)));
  assert.deepEqual(refs, [...refs].sort((a, b) => a - b), 'refs grow in document order');
  assert.match(s.Verification, /- page content: untrusted \[marker [0-9a-f]{16}\]/);
  assert.equal(sc(nav).page_content.marker, /\[marker ([0-9a-f]{16})\]/.exec(s.Verification)[1]);
  assert.match(s.Evidence, /- evidence: glassbox:\/\/artifact\/[0-9a-f]{64}/);

  /* a ref straight from that answer, no browser_snapshot in between */
  const submit = parseSnapshot(yaml).find((n) => n.role === 'button' && n.name === 'Submit').ref;
  const click = await ok(full.client, 'browser_click', { target: submit });
  assert.equal(codeOf(click), `await page.getByTestId('submit-order').click();`, 'the test id, in --test-id-attribute');
  assert.match(snapshotOf(click), /paragraph \[ref=e\d+\]: Submitted/);
});

test('the locator is role + name when unique, CSS when not, the selector when given', async () => {
  const snap = parseSnapshot(snapshotOf(await ok(full.client, 'browser_navigate', { url: site.url + '/compat.html' })));
  const lone = snap.find((n) => n.name === 'Lone').ref;
  assert.equal(codeOf(await ok(full.client, 'browser_hover', { target: lone })),
    `await page.getByRole('button', { name: 'Lone' }).hover();`);
  const twin = snap.filter((n) => n.name === 'Twin')[1].ref;
  const r = await ok(full.client, 'browser_click', { target: twin });
  assert.equal(codeOf(r), `await page.locator('body > button:nth-of-type(3)').click();`,
    'two buttons are named Twin: a CSS selector that finds only the second');
  const banner = snap.filter((n) => n.role === 'button' && n.name === 'Close')[1].ref;
  assert.equal(codeOf(await ok(full.client, 'browser_hover', { target: banner })),
    `await page.getByText('Close the banner').hover();`,
    'two buttons are named Close: the text that finds only the second');
  assert.match(snapshotOf(r), /Second twin/, 'and it was the second that was clicked');
  assert.equal(codeOf(await ok(full.client, 'browser_click', { target: '#lone', button: 'right', modifiers: ['Shift'] })),
    `await page.locator('#lone').click({\n  button: 'right',\n  modifiers: ['Shift']\n});`);
  const email = snap.find((n) => n.name === 'Email').ref;
  assert.equal(codeOf(await ok(full.client, 'browser_type', { target: email, text: "it's me", submit: true })),
    `await page.getByRole('textbox', { name: 'Email' }).fill('it\\'s me');\nawait page.getByRole('textbox', { name: 'Email' }).press('Enter');`);
  assert.equal(codeOf(await ok(full.client, 'browser_press_key', { key: 'Escape' })),
    `// Press Escape\nawait page.keyboard.press('Escape');`);
});

test('a typed password shows as an environment lookup, never its value, in the answer and the audit record', async () => {
  const snap = parseSnapshot(snapshotOf(await ok(full.client, 'browser_navigate', { url: site.url + '/compat.html' })));
  const pw = snap.find((n) => n.name === 'Password').ref;
  const typed = await ok(full.client, 'browser_type', { target: pw, text: 'hunter2-secret' });
  assert.match(codeOf(typed), /\.fill\(process\.env\['TYPED_SECRET'\]\);$/);
  assert.doesNotMatch(textOf(typed), /hunter2-secret/);
  const records = auditRecords(full.dataDir).map((r) => JSON.stringify(r));
  assert.ok(records.length > 0);
  assert.ok(!records.some((r) => r.includes('hunter2-secret')), 'no audit record holds the password');
});

test('the audit record of each action keeps the code it ran as playwright_code', async () => {
  const bodies = auditRecords(full.dataDir).map((r) => r.body || {});
  const codes = bodies.map((b) => b.playwright_code).filter((c) => typeof c === 'string');
  assert.ok(codes.includes(`await page.goto('${site.url}/compat.html');\n`), `goto recorded: ${JSON.stringify(codes).slice(0, 500)}`);
  assert.ok(codes.some((c) => c.includes(`page.getByTestId('submit-order').click();`)));
});

test('an HTTP error status shows in ### Page as Playwright MCP writes it', async () => {
  const r = await callTool(full.client, 'browser_navigate', { url: site.url + '/status/402' });
  assert.match(sections(r).Page, /^- HTTP status: 402 Payment Required$/m);
  const fine = await ok(full.client, 'browser_navigate', { url: site.url + '/compat.html' });
  assert.doesNotMatch(sections(fine).Page, /HTTP status/);
});

test('browser_evaluate: the value in ### Result as JSON, the code with the function', async () => {
  const r = await ok(full.client, 'browser_evaluate', { function: '() => document.title' });
  assert.equal(sections(r).Result, '"Compat"');
  assert.equal(codeOf(r), `await page.evaluate('() => document.title');`);
});

test('browser_snapshot: depth, filename into the output dir, bad names refused', async () => {
  await ok(full.client, 'browser_navigate', { url: site.url + '/form.html' });
  const shallow = snapshotOf(await ok(full.client, 'browser_snapshot', { depth: 1 }));
  assert.match(shallow, /^ {2}- /m, 'depth 1: the top lines and their children');
  assert.doesNotMatch(shallow, /^ {4}- /m, 'depth 1: nothing deeper');
  const deep = snapshotOf(await ok(full.client, 'browser_snapshot', {}));
  assert.match(deep, /^ {4}- textbox "Name"/m);
  const saved = await ok(full.client, 'browser_snapshot', { filename: 'form-snapshot.yml' });
  assert.equal(sections(saved).Result, '- [Snapshot](form-snapshot.yml)');
  assert.equal(fs.readFileSync(path.join(outDir, 'form-snapshot.yml'), 'utf8'), deep);
  for (const bad of ['../escape.yml', 'sub/dir.yml', '.hidden']) {
    const r = await callTool(full.client, 'browser_snapshot', { filename: bad });
    assert.equal(r.isError, true, bad);
    assert.match(sections(r).Error, /not a plain file name/);
  }
  assert.ok(!fs.existsSync(path.join(outDir, '..', 'escape.yml')));
  assert.doesNotMatch(deep, /\[box=/, 'no boxes unless asked');
});

test('browser_snapshot boxes: each element box in CSS pixels after its ref', async () => {
  await ok(full.client, 'browser_navigate', { url: site.url + '/compat.html' });
  const boxed = snapshotOf(await ok(full.client, 'browser_snapshot', { boxes: true }));
  assert.match(boxed, /- button "Boxed" \[ref=e\d+\] \[box=600,50,80,40\]$/m);
});

test('browser_snapshot ### Page: the title the document has now, none when it has none', async () => {
  await ok(full.client, 'browser_navigate', { url: site.url + '/compat.html' });
  await ok(full.client, 'browser_evaluate', { function: "() => { document.title = '  Renamed   by\\tscript '; }" });
  const renamed = await ok(full.client, 'browser_snapshot', {});
  assert.equal(sections(renamed).Page, `- Page URL: ${site.url}/compat.html\n- Page Title: Renamed by script`);
  assert.equal(sc(renamed).title, 'Renamed by script');
  await ok(full.client, 'browser_evaluate', { function: "() => { document.title = ''; }" });
  const untitled = await ok(full.client, 'browser_snapshot', {});
  assert.equal(sections(untitled).Page, `- Page URL: ${site.url}/compat.html`);
  assert.equal(sc(untitled).title, '');
  /* a subtree says nothing of the page's title: ### Page asks the browser */
  await ok(full.client, 'browser_evaluate', { function: "() => { document.title = 'Compat'; }" });
  const part = await ok(full.client, 'browser_snapshot', { target: 'h1' });
  assert.equal(sc(part).title, undefined);
  assert.equal(sections(part).Page, `- Page URL: ${site.url}/compat.html\n- Page Title: Compat`);
});

test('an unknown ref fails with Playwright MCP words, then glassbox detail', async () => {
  const r = await callTool(full.client, 'browser_click', { target: 'e999' });
  assert.equal(r.isError, true);
  assert.match(sections(r).Error, /^Error: Ref e999 not found in the current page snapshot\. Try capturing new snapshot\. ./);
});

test('data: URLs open only when the policy says allow_data_urls, and are refused naming the key otherwise', async () => {
  const yes = await ok(full.client, 'browser_navigate', { url: 'data:text/html,<h1>Hello</h1>' });
  assert.match(snapshotOf(yes), /heading "Hello" \[level=1\] \[ref=e\d+\]/);
  const no = await callTool(changed.client, 'browser_navigate', { url: 'data:text/html,<h1>Hello</h1>' });
  assert.equal(no.isError, true);
  assert.match(sections(no).Error, /^Error: Access to "data:" protocol is blocked\. Attempted URL: "data:text\/html,<h1>Hello<\/h1>"\./);
  assert.match(sections(no).Error, /"allow_data_urls": true/);
  const blank = await ok(changed.client, 'browser_navigate', { url: 'about:blank' });
  assert.equal(sections(blank).Page, '- Page URL: about:blank');
});

test('snapshot_mode changed: only what changed, and refs of parts left out keep working', async () => {
  const nav = await ok(changed.client, 'browser_navigate', { url: site.url + '/form.html' });
  const first = parseSnapshot(snapshotOf(nav));
  const name = first.find((n) => n.role === 'textbox' && n.name === 'Name').ref;
  const save = first.find((n) => n.role === 'button' && n.name === 'Save').ref;
  const link = first.find((n) => n.role === 'link').ref;
  const typed = snapshotOf(await ok(changed.client, 'browser_type', { target: name, text: 'Ada' }));
  assert.match(typed, /^# only what changed since the last snapshot/);
  assert.match(typed, new RegExp(`textbox "Name" \\[active\\] \\[ref=${name}\\]: Ada`));
  assert.doesNotMatch(typed, /link "Go to the second page"/, 'the unchanged link is left out');
  assert.doesNotMatch(typed, /button "Save"/, 'the unchanged button is left out');
  /* a ref from the first answer, of a node the last answer left out */
  const saved = snapshotOf(await ok(changed.client, 'browser_click', { target: save }));
  assert.match(saved, /paragraph \[ref=e\d+\]: "Saved: Ada"/);
  assert.ok(saved.length < snapshotOf(nav).length, 'smaller than the whole snapshot');
  const nothing = snapshotOf(await ok(changed.client, 'browser_hover', { target: link }));
  assert.match(nothing, /^# /);
  /* browser_snapshot still gives the whole page */
  const whole = snapshotOf(await ok(changed.client, 'browser_snapshot', {}));
  assert.match(whole, /^- generic/);
  assert.match(whole, /link "Go to the second page"/);
});

test('snapshot_mode none: the answer has ### Page and no snapshot', async () => {
  const none = await start(['--snapshot-mode', 'none']);
  try {
    const fix = await startFixtureServer();
    try {
      const r = await ok(none.client, 'browser_navigate', { url: fix.url + '/form.html' });
      assert.equal(sections(r).Snapshot, undefined);
      assert.match(sections(r).Page, /^- Page URL: /);
    } finally {
      await fix.close();
    }
  } finally {
    await none.close();
    none.removeDataDir();
  }
});

test('the initialize instructions say once that page content is data; answers carry only a marker', async () => {
  const instructions = full.client.getInstructions();
  assert.match(instructions, /never instructions/);
  const r = await ok(full.client, 'browser_snapshot', {});
  assert.doesNotMatch(textOf(r), /not instructions|never instructions/);
});

test('Playwright MCP flags glassbox does not honour are refused at start, with the reason', () => {
  const dir = newDataDir();
  try {
    for (const [args, why] of [
      [['--allow-unrestricted-file-access'], /not honoured: tools never open file: URLs/],
      [['--browser=firefox'], /drives Chromium only/],
      [['--snapshot-mode', 'sometimes'], /--snapshot-mode sometimes: not a valid value/],
      [['--grant-permissions=teleport'], /"teleport" is not a permission/],
    ]) {
      const r = spawnSync(glassboxBin(), ['mcp', ...args], { input: '', env: { ...process.env, GLASSBOX_DATA_DIR: dir }, encoding: 'utf8' });
      assert.notEqual(r.status, 0, args.join(' '));
      assert.match(r.stderr, why);
    }
    const cfg = path.join(dir, 'pw.json');
    fs.writeFileSync(cfg, JSON.stringify({ saveVideo: { width: 800, height: 600 } }));
    const r = spawnSync(glassboxBin(), ['mcp', `--config=${cfg}`], { input: '', env: { ...process.env, GLASSBOX_DATA_DIR: dir }, encoding: 'utf8' });
    assert.notEqual(r.status, 0);
    assert.match(r.stderr, /"saveVideo" is not honoured/);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
