/*
 * Playwright MCP's exact results and its words, through real Chromium and
 * the MCP SDK client: --no-structured-content (and the policy's
 * "structured_content": false) drops outputSchema from tools/list and
 * structuredContent from results and nothing else; timeouts say
 * "Timeout Nms exceeded." with glassbox's detail after; a target that is
 * not yet actionable is waited for; a ref whose element left says so in
 * Playwright MCP's words; --image-responses omit and --vision; a config's
 * deviceScaleFactor and screenshot scale; a returned image fitted to what
 * a model takes; verify tools' code in Python; browser_close then another
 * call opens a new browser, recorded.
 */
import { test, before, after } from 'node:test';
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
  auditRecords,
  imagesOf,
  pngSize,
  REPO_ROOT,
} from '../e2e/lib.mjs';

const loopbackPolicy = path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json');

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

/* The "### Error" section of an answer. */
function errorOf(result) {
  const m = /^### Error\n([\s\S]*?)(?=\n### |$)/m.exec(textOf(result));
  return m ? m[1] : '';
}

let site;
let plain; /* --no-structured-content, --timeout-action=1500 */
let rich; /* the default: structuredContent, the default timeouts */
let tmp;

before(async () => {
  site = await startFixtureServer();
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-pwresults-'));
  const policy = JSON.parse(fs.readFileSync(loopbackPolicy, 'utf8'));
  fs.writeFileSync(path.join(tmp, 'data.json'), JSON.stringify({ ...policy, allow_data_urls: true }));
  plain = await start(['--no-structured-content', '--timeout-action=1500']);
  rich = await start([]);
});

after(async () => {
  await plain?.close();
  await rich?.close();
  await site?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

test('--no-structured-content: tools/list is the default one without outputSchema', async () => {
  const withSchema = (await rich.client.listTools()).tools;
  const without = (await plain.client.listTools()).tools;
  assert.ok(withSchema.every((t) => t.outputSchema), 'by default every tool declares its outputSchema');
  assert.ok(without.every((t) => !('outputSchema' in t)), 'with the option no tool declares one');
  const strip = (t) => {
    const { outputSchema, ...rest } = t;
    return rest;
  };
  assert.deepEqual(without, withSchema.map(strip), 'nothing else of the list differs');
});

test('--no-structured-content: results carry no structuredContent, and the same content', async () => {
  const url = `${site.url}/index.html`;
  const a = await callTool(rich.client, 'browser_navigate', { url });
  const b = await callTool(plain.client, 'browser_navigate', { url });
  assert.equal(sc(a).ok, true, JSON.stringify(a).slice(0, 1500));
  assert.ok(!a.isError && !b.isError, textOf(b));
  assert.ok(!('structuredContent' in b), `no structuredContent: ${JSON.stringify(b).slice(0, 400)}`);
  assert.deepEqual(b.content.map((c) => c.type), a.content.map((c) => c.type), 'the same kinds of content');
  const head = (r) => textOf(r).split('\n### Verification')[0];
  assert.equal(head(b), head(a), 'the same text up to the verification (whose marker is per session)');

  /* a refusal before the browser is reached, and a failed action */
  const bad = await callTool(plain.client, 'browser_click', { target: 42 });
  assert.equal(bad.isError, true, JSON.stringify(bad));
  assert.ok(!('structuredContent' in bad), JSON.stringify(bad));
  const off = await callTool(plain.client, 'browser_pdf_save', {});
  assert.equal(off.isError, true, JSON.stringify(off));
  assert.ok(!('structuredContent' in off), JSON.stringify(off));
});

test('"structured_content": false in the policy does the same; a value that is not a boolean is refused', async () => {
  const policy = JSON.parse(fs.readFileSync(loopbackPolicy, 'utf8'));
  const file = path.join(tmp, 'plain.json');
  fs.writeFileSync(file, JSON.stringify({ ...policy, structured_content: false }));
  const gb = await start([], file);
  try {
    const tools = (await gb.client.listTools()).tools;
    assert.ok(tools.length > 0 && tools.every((t) => !('outputSchema' in t)));
    const r = await callTool(gb.client, 'browser_navigate', { url: `${site.url}/index.html` });
    assert.ok(!r.isError, textOf(r));
    assert.ok(!('structuredContent' in r));
  } finally {
    await gb.close();
  }
  const wrong = path.join(tmp, 'wrong.json');
  fs.writeFileSync(wrong, JSON.stringify({ ...policy, structured_content: 'no' }));
  const gb2 = await start([], wrong);
  try {
    const r = await callTool(gb2.client, 'browser_navigate', { url: `${site.url}/index.html` });
    assert.equal(r.isError, true);
    assert.match(textOf(r), /structured_content must be true or false/);
  } finally {
    await gb2.close();
  }
});

test('a wait that ends says "Timeout Nms exceeded." with the text after', async () => {
  await ok(rich.client, 'browser_navigate', { url: `${site.url}/index.html` });
  const r = await callTool(plain.client, 'browser_navigate', { url: `${site.url}/index.html` });
  assert.ok(!r.isError, textOf(r));
  const w = await callTool(plain.client, 'browser_wait_for', { text: 'This text never appears' });
  assert.equal(w.isError, true);
  assert.match(errorOf(w), /Timeout 1500ms exceeded\. The text "This text never appears" did not appear/);
  const g = await callTool(plain.client, 'browser_wait_for', { textGone: 'glassbox' });
  if (g.isError) assert.match(errorOf(g), /Timeout 1500ms exceeded\. The text "glassbox" did not go away/);
});

test('a navigation past --timeout-navigation says "Timeout Nms exceeded."', async () => {
  const gb = await start(['--timeout-navigation=1500']);
  try {
    const r = await callTool(gb.client, 'browser_navigate', { url: `${site.url}/api/slow?ms=6000` });
    assert.equal(r.isError, true, textOf(r));
    assert.match(errorOf(r), /^(Error: )?Timeout 1500ms exceeded\. /);
    assert.equal(sc(r).error?.code, 'timeout');
  } finally {
    await gb.close();
  }
});

test('a target not yet actionable is waited for: clicked once enabled, else the timeout and the reason', async () => {
  const url = `${site.url}/actionable.html`;
  let r = await callTool(rich.client, 'browser_navigate', { url });
  assert.ok(!r.isError, textOf(r));
  /* enabled 400 ms after the page loads: the click waits for it */
  r = await callTool(rich.client, 'browser_click', { target: '#later', element: 'Enabled later' });
  assert.ok(!r.isError, textOf(r));
  assert.equal(sc(r).ok, true);
  const text = await callTool(rich.client, 'browser_evaluate', { function: "() => document.querySelector('#later').textContent" });
  assert.equal(sc(text).result, 'Clicked');

  /* never enabled: Playwright's default action timeout, 5000 ms, then why */
  r = await callTool(rich.client, 'browser_click', { target: '#never', element: 'Never enabled' });
  assert.equal(r.isError, true);
  assert.match(errorOf(r), /Timeout 5000ms exceeded\. "#never" is disabled/);
  assert.equal(sc(r).error.code, 'disabled');

  /* a read-only field within --timeout-action 1500 */
  await ok(plain.client, 'browser_navigate', { url }).catch(() => {});
  r = await callTool(plain.client, 'browser_type', { target: 'input', element: 'Code', text: 'Hi!' });
  assert.equal(r.isError, true);
  assert.match(errorOf(r), /Timeout 1500ms exceeded\. .* is not an editable field/);
});

test('--image-responses omit: the screenshot is kept and written, not returned as an image', async () => {
  const out = path.join(tmp, 'out');
  const gb = await start(['--image-responses', 'omit', `--output-dir=${out}`]);
  try {
    await ok(gb.client, 'browser_navigate', { url: `${site.url}/index.html` });
    const r = await ok(gb.client, 'browser_take_screenshot', {});
    assert.equal(imagesOf(r).length, 0, 'no image item');
    assert.match(textOf(r), /await page\.screenshot/);
    assert.equal(fs.readdirSync(out).filter((f) => /^page-.*\.png$/.test(f)).length, 1, 'the file is written');
    assert.ok(sc(r).evidence, 'and kept as evidence');
  } finally {
    await gb.close();
  }
  const shown = await ok(rich.client, 'browser_take_screenshot', {});
  assert.equal(imagesOf(shown).length, 1, 'by default the image is returned');
});

test('--vision offers the vision tools, with --caps or without', async () => {
  for (const args of [['--vision'], ['--vision', '--caps=pdf'], ['--caps=pdf', '--vision']]) {
    const gb = await start(args);
    try {
      const names = (await gb.client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes('browser_mouse_click_xy'), `${args}: ${names}`);
      if (args.includes('--caps=pdf')) assert.ok(names.includes('browser_pdf_save'), `${args}: ${names}`);
    } finally {
      await gb.close();
    }
  }
  const names = (await rich.client.listTools()).tools.map((t) => t.name);
  assert.ok(!names.includes('browser_mouse_click_xy'), 'without it they are off');
});

test('browser_close, then a call: a new browser under the same policy, both recorded', async () => {
  const gb = await start([]);
  try {
    await ok(gb.client, 'browser_navigate', { url: `${site.url}/index.html` });
    const closed = await ok(gb.client, 'browser_close', {});
    assert.match(textOf(closed), /await page\.close\(\)/);
    const again = await ok(gb.client, 'browser_navigate', { url: `${site.url}/index.html` });
    assert.match(textOf(again), /### Snapshot/);
    assert.match(textOf(again), /\[ref=e1\]/);
    const opened = auditRecords(gb.dataDir).filter((rec) => rec.kind === 'session_opened');
    assert.equal(opened.length, 2, 'two browsers opened');
    assert.notEqual(opened[0].session, opened[1].session, 'each its own session');
    assert.equal(opened[1].body.manifest.policy_sha256, opened[0].body.manifest.policy_sha256, 'the same policy');
    /* the policy holds in the new browser: the host it denies (on loopback) is refused */
    const port = new URL(site.url).port;
    const refused = await callTool(gb.client, 'browser_navigate', { url: `http://evil.test:${port}/index.html` });
    assert.equal(refused.isError, true, textOf(refused));
    assert.match(textOf(refused), /evil\.test/);
  } finally {
    await gb.close();
  }
});

test('a ref whose element left the page: Playwright MCP\'s words first, then why', async () => {
  await ok(rich.client, 'browser_navigate', { url: `${site.url}/actionable.html` });
  const snap = textOf(await ok(rich.client, 'browser_snapshot', {}));
  const ref = /button "Never enabled" \[disabled\] \[ref=(e\d+)\]/.exec(snap)?.[1];
  assert.ok(ref, snap);
  await ok(rich.client, 'browser_evaluate', { function: "() => document.querySelector('#never').remove()" });
  const r = await callTool(rich.client, 'browser_click', { target: ref, element: 'Never enabled' });
  assert.equal(r.isError, true);
  assert.match(errorOf(r), new RegExp(`Ref ${ref} not found in the current page snapshot\\. Try capturing new snapshot\\. The ref is stale`));
  assert.equal(sc(r).error.code, 'stale_ref');
});

test('a config\'s deviceScaleFactor: scale css gives CSS pixels, device the device\'s', async () => {
  const cfg = path.join(tmp, 'dpr.json');
  fs.writeFileSync(cfg, JSON.stringify({ browser: { contextOptions: { viewport: { width: 400, height: 300 }, deviceScaleFactor: 2 } } }));
  const gb = await start([`--config=${cfg}`]);
  try {
    await ok(gb.client, 'browser_navigate', { url: `${site.url}/index.html` });
    const dpr = await ok(gb.client, 'browser_evaluate', { function: '() => [innerWidth, innerHeight, devicePixelRatio]' });
    assert.deepEqual(sc(dpr).result, [400, 300, 2]);
    const css = imagesOf(await ok(gb.client, 'browser_take_screenshot', { scale: 'css' }))[0];
    assert.deepEqual(pngSize(css.data), { width: 400, height: 300 });
    const device = await ok(gb.client, 'browser_take_screenshot', { scale: 'device' });
    assert.deepEqual(pngSize(imagesOf(device)[0].data), { width: 800, height: 600 });
    assert.match(textOf(device), /scale: 'device'/);
  } finally {
    await gb.close();
  }
  const bad = path.join(tmp, 'dpr-bad.json');
  fs.writeFileSync(bad, JSON.stringify({ browser: { contextOptions: { deviceScaleFactor: 'two' } } }));
  const gb2 = await start([`--config=${bad}`]).catch((e) => e);
  if (!(gb2 instanceof Error)) {
    await gb2.close();
    assert.fail('a deviceScaleFactor that is not a number is refused at start');
  }
});

test('an image larger than a model takes is returned fitted; the file keeps it whole', async () => {
  const out = path.join(tmp, 'fit');
  const gb = await start([`--output-dir=${out}`], path.join(tmp, 'data.json'));
  try {
    const page = '<body style="width: 2000px; height: 2000px; background: red; margin: 0"></body>';
    await ok(gb.client, 'browser_navigate', { url: `data:text/html,${encodeURIComponent(page)}` });
    const r = await ok(gb.client, 'browser_take_screenshot', { fullPage: true });
    const { width, height } = pngSize(imagesOf(r)[0].data);
    assert.equal(width, 1098, `${width}x${height}`);
    assert.equal(height, 1098, `${width}x${height}`);
    const file = fs.readdirSync(out).find((f) => f.endsWith('.png'));
    assert.deepEqual(pngSize(fs.readFileSync(path.join(out, file))), { width: 2000, height: 2000 });
  } finally {
    await gb.close();
  }
});

test('--codegen python: a verification\'s code is Python', async () => {
  const gb = await start(['--codegen=python', '--caps=testing']);
  try {
    await ok(gb.client, 'browser_navigate', { url: `${site.url}/actionable.html` });
    const r = await ok(gb.client, 'browser_verify_value', { type: 'textbox', element: 'Code', target: 'input', value: 'fixed' });
    assert.match(textOf(r), /^expect\(page\.[a-z_]+\(.*\)\)\.to_have_value\("fixed"\)$/m);
    // the fence names the language, as Playwright MCP's does
    assert.match(textOf(r), /### Ran Playwright code\n```python\n/);
    const empty = await ok(gb.client, 'browser_evaluate', { function: "() => { document.querySelector('input').value = ''; }" });
    assert.ok(!empty.isError);
    const e = await ok(gb.client, 'browser_verify_value', { type: 'textbox', element: 'Code', target: 'input', value: '' });
    assert.match(textOf(e), /\)\.to_be_empty\(\)$/m);
    const t = await ok(gb.client, 'browser_verify_text_visible', { text: 'Never enabled' });
    // the text is the button's name: its role and name, as Playwright MCP writes it
    assert.match(textOf(t), /^expect\(page\.get_by_role\("button", name="Never enabled"\)\)\.to_be_visible\(\)$/m);
  } finally {
    await gb.close();
  }
});

test('the page\'s viewport is the size asked for (default 1280x720), not the window\'s less its bars', async () => {
  await ok(rich.client, 'browser_navigate', { url: `${site.url}/index.html` });
  const r = await ok(rich.client, 'browser_evaluate', { function: '() => [innerWidth, innerHeight]' });
  assert.deepEqual(sc(r).result, [1280, 720]);
  const gb = await start(['--viewport-size=900x600']);
  try {
    await ok(gb.client, 'browser_navigate', { url: `${site.url}/index.html` });
    const v = await ok(gb.client, 'browser_evaluate', { function: '() => [innerWidth, innerHeight]' });
    assert.deepEqual(sc(v).result, [900, 600]);
    const shot = imagesOf(await ok(gb.client, 'browser_take_screenshot', {}))[0];
    assert.deepEqual(pngSize(shot.data), { width: 900, height: 600 });
  } finally {
    await gb.close();
  }
});
