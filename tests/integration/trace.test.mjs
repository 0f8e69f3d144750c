/*
 * The trail where QA teams and reviewers look: `glassbox run --trace`,
 * `glassbox trace export`, `glassbox har export` and `glassbox session
 * export`, checked with the real tools. The flows of fixtures/flows/ run
 * against the fixture shop in real Chromium; their traces are opened in
 * Playwright's own trace viewer (playwright-core's show-trace server,
 * loaded in headless Chromium); the HAR is validated against the HAR 1.2
 * schema (har-schema, ajv); the session exported as a flow is replayed
 * with `glassbox run`, and as a spec with `npx playwright test` on a plain
 * Chromium. A typed password appears in none of the exports.
 */
import { test, before, after } from 'node:test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, startFixtureServer, glassboxBin, REPO_ROOT, newDataDir, auditRecords, sha256,
} from '../e2e/lib.mjs';
import { exec as execIn, zipEntries, inTraceViewer, harValidator, runSpec } from './trace_helpers.mjs';

const FLOWS = path.join(REPO_ROOT, 'fixtures', 'flows');
const SECRET = `pw-${crypto.randomBytes(12).toString('hex')}`;
const TOKEN = `tok-${crypto.randomBytes(12).toString('hex')}`;
const HEADER_TOKEN = `hdr-${crypto.randomBytes(12).toString('hex')}`;
let fixture;
let work;
let dataDir;
let firstRun;

/* Runs a command in the work dir with the test's data dir. */
const exec = (cmd, args, { env = {}, cwd = work } = {}) => execIn(cmd, args,
  { cwd, env: { GLASSBOX_CONFIG: '', GLASSBOX_DATA_DIR: dataDir, ...env } });
const glassbox = (args, opts) => exec(glassboxBin(), args, opts);
const shopEnv = () => ({ SHOP_URL: `http://shop.test:${fixture.port}` });

before(async () => {
  fixture = await startFixtureServer();
  work = newDataDir('glassbox-trace-');
  dataDir = path.join(work, 'data');
  fs.writeFileSync(path.join(work, 'vars.env'), `SHOP_PASSWORD='${SECRET}'\n`, { mode: 0o600 });
  /* a navigation whose query carries a credential, for the HAR */
  fs.writeFileSync(path.join(work, 'token.json'), JSON.stringify({
    name: 'token in query',
    steps: [
      { navigate: `\${SHOP_URL}/shop/?token=${TOKEN}&q=coffee`, expect: { title: 'Corner Shop' } },
      /* the page's own request with credentials in its headers */
      { evaluate: `() => fetch('/api/items', { headers: { Authorization: 'Bearer ${HEADER_TOKEN}', 'X-Api-Key': '${HEADER_TOKEN}' } }).then((r) => r.status)`,
        expect: { text: '200' } },
    ],
  }));
  firstRun = await glassbox(['run', path.join(FLOWS, 'checkout.json'), path.join(FLOWS, 'expect-fails.json'),
    path.join(work, 'token.json'), '--config', path.join(REPO_ROOT, 'fixtures', 'policy', 'flows.json'),
    '--vars', path.join(work, 'vars.env'), '--junit', path.join(work, 'junit.xml'),
    '--trace', path.join(work, 'traces')], { env: shopEnv() });
});

after(async () => {
  await fixture?.close();
  if (work && !process.env.GLASSBOX_KEEP_DATA) fs.rmSync(work, { recursive: true, force: true });
});

/* The tool_call records of the session a flow's run left, in order. */
function flowActions(flow) {
  const records = auditRecords(dataDir);
  const opened = records.filter((r) => r.kind === 'session_opened' && r.body.flow === flow).at(-1);
  assert.ok(opened, `a session_opened record names flow ${flow}`);
  return { session: opened.session, actions: records.filter((r) => r.session === opened.session && r.kind === 'tool_call') };
}

test('glassbox run --trace writes one trace per flow and links it from its JUnit testcase', () => {
  assert.equal(firstRun.code, 1, `one flow fails on purpose: ${firstRun.stdout}\n${firstRun.stderr}`);
  const xml = fs.readFileSync(path.join(work, 'junit.xml'), 'utf8');
  for (const [i, name] of [[1, 'checkout'], [2, 'expect-fails'], [3, 'token-in-query']]) {
    const file = path.join(work, 'traces', `0${i}-${name}.zip`);
    assert.ok(fs.existsSync(file), `${file} was written: ${firstRun.stdout}`);
    assert.match(xml, new RegExp(`<property name="trace" value="${file}"/>`));
    assert.ok(xml.includes(`[[ATTACHMENT|${file}]]`), 'the trace is an attachment of the testcase');
  }
});

test('the trace opens in Playwright\'s trace viewer: every action, its screenshot, its verdicts', async () => {
  const zip = path.join(work, 'traces', '01-checkout.zip');
  const { actions } = flowActions('checkout');
  assert.equal(actions.length, 11);
  await inTraceViewer(zip, async (page) => {
    const entries = page.locator('.tree-view-entry');
    await entries.first().waitFor({ timeout: 60000 });
    assert.equal(await entries.count(), actions.length, 'one action per tool call');
    const titles = await entries.allInnerTexts();
    actions.forEach((rec, i) => assert.ok(titles[i].startsWith(rec.body.tool), `action ${i + 1} is ${rec.body.tool}: ${titles[i]}`));
    await page.getByRole('tab', { name: /Attachments/ }).click();
    /* an action that took no screenshot (a wait) shows the page as the
     * previous one left it, as its "before" */
    let shot;
    for (let i = 0; i < actions.length; i++) {
      await entries.nth(i).click();
      shot = actions[i].artifacts.find((a) => a.kind === 'screenshot')?.sha256
        ?? actions[i].body.evidence?.find((e) => e.kind === 'screenshot')?.sha256 ?? shot;
      assert.ok(shot, `action ${i + 1} has a screenshot to show`);
      const img = page.locator(`.attachment-item img[src*="${shot}"]`).first();
      await img.waitFor({ timeout: 30000 });
      await page.waitForFunction((el) => el.complete && el.naturalWidth > 0, await img.elementHandle());
    }
    /* glassbox's verdicts are in the action's log */
    await entries.nth(1).click();
    await page.getByRole('tab', { name: /^Log/ }).click();
    await page.getByText('verdict text: expected "Cart (1)", observed "present"').first().waitFor({ timeout: 30000 });
  });
});

test('a failed action shows its error in the trace viewer', async () => {
  await inTraceViewer(path.join(work, 'traces', '02-expect-fails.zip'), async (page) => {
    const entries = page.locator('.tree-view-entry');
    await entries.first().waitFor({ timeout: 60000 });
    assert.equal(await entries.count(), 2);
    await entries.nth(1).click();
    await page.getByRole('tab', { name: /Errors/ }).click();
    await page.getByText('expected text "Cart (2)" on the page but it is not there').first().waitFor({ timeout: 30000 });
  });
});

test('trace export: resources are the signed artifacts, no secret inside, the export is audited', async () => {
  const { session, actions } = flowActions('checkout');
  const out = path.join(work, 'by-session.zip');
  const r = await glassbox(['trace', 'export', '--session', session, '-o', out]);
  assert.equal(r.code, 0, r.stderr);
  const entries = await zipEntries(out);
  assert.ok(entries['trace.trace'] && entries['trace.network'] !== undefined, Object.keys(entries).join(' '));
  const signed = new Set(actions.flatMap((a) => a.artifacts.map((x) => x.sha256)));
  assert.ok(actions.every((a) => !a.body.screencast), 'no session recording unless the policy asks for one');
  for (const [name, bytes] of Object.entries(entries)) {
    assert.ok(!bytes.includes(SECRET), `${name} holds no typed password`);
    if (!name.startsWith('resources/')) continue;
    const hex = name.slice('resources/'.length, -'.png'.length);
    assert.equal(sha256(bytes), hex, `${name} is named by its sha256`);
    assert.ok(signed.has(hex), `${name} is an artifact a record of the session signs`);
  }
  const events = entries['trace.trace'].toString().trim().split('\n').map((l) => JSON.parse(l));
  assert.equal(events[0].type, 'context-options');
  const befores = events.filter((e) => e.type === 'before');
  assert.deepEqual(befores.map((e) => e.title.split(' ')[0]), actions.map((a) => a.body.tool));
  const network = entries['trace.network'].toString().trim().split('\n').map((l) => JSON.parse(l));
  assert.ok(network.some((n) => n.type === 'resource-snapshot' && n.snapshot.response.status === 200
    && n.snapshot.request.url.startsWith(`http://shop.test:${fixture.port}/shop/`)), 'the navigation\'s requests are in trace.network');
  const exported = auditRecords(dataDir).filter((x) => x.kind === 'exported' && x.session === session);
  assert.ok(exported.some((x) => x.body.format === 'playwright_trace' && x.body.sha256 === sha256(fs.readFileSync(out))),
    'an exported record names the zip by its sha256');
});

test('bad export requests get a precise error and touch nothing', async () => {
  let r = await glassbox(['trace', 'export', '--session', 'no-such-session', '-o', path.join(work, 'x.zip')]);
  assert.equal(r.code, 3);
  assert.match(r.stderr, /no tenant under .* has a record of session no-such-session: check the session id/);
  assert.ok(!fs.existsSync(path.join(work, 'x.zip')));
  r = await glassbox(['har', 'export']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /give exactly one of --session ID and --flow NAME/);
  r = await glassbox(['trace', 'export', '--sesion', 'x']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /unknown option '--sesion'\n\(glassbox trace --help shows the options\)/);
  r = await glassbox(['trace', 'export', '--flow', 'checkout', '-o', '-']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /a trace is a zip file: give -o FILE/);
  r = await glassbox(['session', 'export', '--flow', 'checkout', '--as', 'selenium']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--as is flow or playwright, not 'selenium'/);
});

test('har export is valid HAR 1.2 with the requests of each action and credentials redacted', async () => {
  const validate = harValidator();
  for (const flow of ['checkout', 'token in query']) {
    const r = await glassbox(['har', 'export', '--flow', flow]);
    assert.equal(r.code, 0, r.stderr);
    assert.ok(!r.stdout.includes(SECRET) && !r.stdout.includes(TOKEN) && !r.stdout.includes(HEADER_TOKEN),
      'no secret in the HAR');
    const har = JSON.parse(r.stdout);
    assert.ok(validate(har), JSON.stringify(validate.errors));
    assert.ok(har.log.entries.some((e) => e.request.url.startsWith(`http://shop.test:${fixture.port}/shop/`)
      && e._resourceType === 'document' && e.response.status === 200), 'the shop page is an entry');
    if (flow === 'token in query') {
      const doc = har.log.entries.find((e) => e.request.url.includes('/shop/?'));
      assert.equal(doc.request.url, `http://shop.test:${fixture.port}/shop/?token=%5Bredacted%5D&q=coffee`);
      assert.deepEqual(doc.request.queryString, [{ name: 'token', value: '[redacted]' }, { name: 'q', value: 'coffee' }]);
      /* the exchanges the action kept: headers (credentials redacted), MIME type, status text */
      const api = har.log.entries.find((e) => e.request.url.endsWith('/api/items'));
      assert.ok(api, `the page's fetch is an entry: ${har.log.entries.map((e) => e.request.url)}`);
      const header = (list, name) => list.find((h) => h.name.toLowerCase() === name)?.value;
      assert.equal(header(api.request.headers, 'authorization'), '[redacted]');
      assert.equal(header(api.request.headers, 'x-api-key'), '[redacted]');
      assert.equal(api.response.status, 200);
      assert.equal(api.response.statusText, 'OK');
      assert.match(api.response.content.mimeType, /json/);
      assert.match(header(api.response.headers, 'content-type'), /json/);
    }
  }
  /* a schema that cannot fail proves nothing: a broken HAR is refused */
  assert.equal(validate({ log: { version: '1.2', entries: [] } }), false);
});

test('session → flow → glassbox run passes on the same site', async () => {
  const file = path.join(work, 'replay.json');
  const r = await glassbox(['session', 'export', '--flow', 'checkout', '--as', 'flow', '-o', file]);
  assert.equal(r.code, 0, r.stderr);
  const flow = JSON.parse(fs.readFileSync(file, 'utf8'));
  assert.equal(flow.steps.length, 11);
  assert.deepEqual(flow.steps[1], { click: 'role=button[name="Add Coffee beans to cart"]', expect: { text: 'Cart (1)' } });
  assert.ok(!JSON.stringify(flow).includes(SECRET), 'the typed password is a variable, not its value');
  const run = await glassbox(['run', file, '--config', path.join(REPO_ROOT, 'fixtures', 'policy', 'flows.json')],
    { env: { TYPED_SECRET: SECRET } });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  assert.match(run.stdout, /PASS checkout replayed/);
});

test('session → Playwright spec → npx playwright test passes on a plain Chromium', async () => {
  const dir = path.join(work, 'spec');
  fs.mkdirSync(dir);
  const r = await glassbox(['session', 'export', '--flow', 'checkout', '--as', 'playwright', '-o', path.join(dir, 'checkout.spec.ts')]);
  assert.equal(r.code, 0, r.stderr);
  const spec = fs.readFileSync(path.join(dir, 'checkout.spec.ts'), 'utf8');
  // the code each action ran: the flow's own locator, as Playwright reads it
  assert.match(spec, /await page\.locator\('role=button\[name="Add Coffee beans to cart"\]'\)\.click\(\);/);
  assert.match(spec, /await expect\(page\.locator\('body'\)\)\.toContainText\("Cart \(1\)"\);/);
  assert.ok(!spec.includes(SECRET));
  const pw = await runSpec(dir, { TYPED_SECRET: SECRET });
  assert.equal(pw.code, 0, `${pw.stdout}\n${pw.stderr}`);
  assert.match(pw.stdout, /1 passed/);
});

test('session recording and HAR bodies: frames are signed evidence, capped, a filmstrip in the trace and the report; text bodies capped', async () => {
  const castData = path.join(work, 'cast-data');
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'flows.json'), 'utf8'));
  policy.screencast = { fps: 2, max_width: 320, max_height: 240, max_frames: 3 };
  policy.har_bodies = { max_bytes: 2000 };
  const policyFile = path.join(work, 'cast-policy.json');
  fs.writeFileSync(policyFile, JSON.stringify(policy));
  const check = await glassbox(['policy', 'check', policyFile, '--json']);
  assert.equal(check.code, 0, check.stderr);
  assert.match(check.stdout, /"screencast":\s*\{[^}]*"fps":\s*2/);
  const env = { ...shopEnv(), GLASSBOX_DATA_DIR: castData };
  const run = await glassbox(['run', path.join(FLOWS, 'checkout.json'), '--config', policyFile,
    '--vars', path.join(work, 'vars.env'), '--trace', path.join(work, 'cast-traces')], { env });
  assert.equal(run.code, 0, `${run.stdout}\n${run.stderr}`);
  const verify = await glassbox(['audit', 'verify'], { env });
  assert.equal(verify.code, 0, `the chain with its frames verifies: ${verify.stdout}${verify.stderr}`);
  const actions = auditRecords(castData).filter((r) => r.kind === 'tool_call');
  const framed = actions.filter((r) => r.body.screencast?.length);
  assert.ok(framed.length >= 5, `most page-changing actions have frames: ${framed.length}`);
  const frames = [];
  for (const rec of framed) {
    assert.ok(rec.body.screencast.length <= 3, 'at most max_frames per action');
    for (const f of rec.body.screencast) {
      assert.ok(f.width <= 320 && f.height <= 240, `a frame is at most 320x240: ${f.width}x${f.height}`);
      assert.ok(rec.artifacts.some((a) => a.kind === 'screencast_frame' && a.sha256 === f.sha256), 'the record signs the frame');
      frames.push(f.sha256);
    }
  }
  const password = actions.find((r) => r.body.arguments?.target === 'css=#password');
  assert.ok(password.body.screencast_withheld, 'no frame of the action that typed a password');
  assert.ok(!password.artifacts.some((a) => a.kind === 'screencast_frame'));
  const entries = await zipEntries(path.join(work, 'cast-traces', '01-checkout.zip'));
  const events = entries['trace.trace'].toString().trim().split('\n').map((l) => JSON.parse(l));
  for (const sha of frames) {
    assert.ok(events.some((e) => e.type === 'screencast-frame' && e.file === `resources/${sha}.png` && e.width <= 320),
      `frame ${sha} is in the trace's filmstrip`);
  }
  const report = path.join(work, 'cast-report.html');
  const rep = await glassbox(['report', '--tenant', 'local', '-o', report], { env });
  assert.equal(rep.code, 0, rep.stderr);
  const html = fs.readFileSync(report, 'utf8');
  const strips = html.match(/<div class="film"[\s\S]*?<\/div><\/div><\/div>|<div class="film"/g) ?? [];
  assert.ok(strips.length >= framed.length, `one filmstrip per action with frames: ${strips.length}`);
  for (const sha of frames) assert.ok(html.includes(`.i${sha}{background-image:url("data:image/png;base64,`), `frame ${sha} is embedded`);
  /* HAR bodies: text up to max_bytes (the shop's page), a larger one left out, saying why */
  const har = await glassbox(['har', 'export', '--flow', 'checkout'], { env });
  assert.equal(har.code, 0, har.stderr);
  assert.ok(!har.stdout.includes(SECRET));
  const harEntries = JSON.parse(har.stdout).log.entries;
  assert.ok(harValidator()(JSON.parse(har.stdout)), 'still valid HAR 1.2 with bodies');
  const shop = harEntries.find((e) => e.request.url.endsWith('/shop/') && e._resourceType === 'document');
  assert.match(shop.response.content.text, /<title>Corner Shop<\/title>/);
  assert.equal(shop.response.content.size, Buffer.byteLength(shop.response.content.text));
  const checkout = harEntries.find((e) => e.request.url.endsWith('/shop/checkout.html'));
  assert.equal(checkout.response.content.text, undefined, 'a body over max_bytes is not kept');
  assert.equal(checkout.response.content.comment, 'larger than har_bodies.max_bytes');
});
