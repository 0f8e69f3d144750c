/*
 * cdp_playwright_test.test.mjs - a Playwright Test suite (the
 * @playwright/test runner, `npx playwright test`) runs on a glassbox
 * session through its CDP endpoint (docs/cdp.md): the spec and config in
 * tests/e2e/playwright connect over CDP (GLASSBOX_CDP_ENDPOINT), navigate,
 * fill, click, assert the text and take a screenshot against the fixture
 * site. The runner's exit code says whether the suite passed; the
 * tenant's trail then holds the connection, the navigations, the input
 * and the screenshots, and `glassbox audit verify` accepts it. A failing
 * expectation and a tenant that may not use CDP make the runner fail.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFixtureServer, REPO_ROOT } from '../e2e/lib.mjs';
import { exec } from './trace_helpers.mjs';
import { startCdpServe, newSession, records, waitRecord, auditVerify } from './cdp_helpers.mjs';

const E2E = path.join(REPO_ROOT, 'tests', 'e2e');
const CONFIG = path.join('playwright', 'playwright.config.mjs');

let site;
let svc;
let out;

before(async () => {
  site = await startFixtureServer();
  svc = await startCdpServe();
  out = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-pwtest-'));
});

after(async () => {
  await svc.stop();
  svc.removeDataDir();
  await site.close();
  fs.rmSync(out, { recursive: true, force: true });
});

/* `npx playwright test` in tests/e2e with the config, on endpoint. */
function playwrightTest(endpoint, env = {}) {
  return exec('npx', ['--no-install', 'playwright', 'test', '--config', CONFIG], {
    cwd: E2E,
    env: { GLASSBOX_CDP_ENDPOINT: endpoint, SITE_URL: site.url, PW_OUTPUT_DIR: path.join(out, String(Date.now())),
      PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', CI: '1', FORCE_COLOR: '0', ...env },
  });
}

/* The records of one endpoint session. */
const of = (id, kind) => records(svc, 'a', kind).filter((r) => r.body && r.body.endpoint === id);

test('npx playwright test passes on a glassbox session, and the trail holds the suite', async () => {
  const s = await newSession(svc, 'a');
  const r = await playwrightTest(s.url);
  assert.equal(r.code, 0, `the suite passes:\n${r.stdout}\n${r.stderr}`);
  assert.match(r.stdout, /2 passed/);
  assert.ok(site.hits().requests['POST /api/save'] >= 1, 'the fixture saw the save');

  await waitRecord(svc, 'a', (x) => x.kind === 'cdp_disconnected' && x.body.endpoint === s.id, 'of the disconnection');
  assert.equal(of(s.id, 'cdp_connected').length, 1);
  const navs = of(s.id, 'cdp_navigation');
  const form = navs.find((x) => x.body.url === site.url + '/form.html');
  assert.ok(form, `the form's navigation: ${JSON.stringify(navs.map((x) => x.body))}`);
  assert.equal(form.body.status, 200);
  assert.ok(navs.some((x) => x.body.url === site.url + '/second.html'), 'the second test\'s navigation');
  const inputs = of(s.id, 'cdp_input');
  const click = inputs.find((x) => x.body.kind === 'mousePressed');
  assert.ok(click, 'the click on Save is recorded');
  assert.equal(click.body.element.name, 'Save');
  assert.ok(inputs.some((x) => x.body.method === 'Input.insertText' && x.body.length === 3), 'the fill, by its length');
  // a screenshot after each navigation, signed evidence with a PNG
  const shots = records(svc, 'a', 'tool_call').filter((x) => x.body && x.body.source === 'cdp' && x.body.screenshot === 'navigation');
  for (const url of [site.url + '/form.html', site.url + '/second.html']) {
    const shot = shots.find((x) => x.body.url === url);
    assert.ok(shot, `a screenshot after the navigation to ${url}: ${JSON.stringify(shots.map((x) => x.body))}`);
    assert.ok(shot.artifacts.some((a) => a.mime === 'image/png'));
  }
  const bye = of(s.id, 'cdp_disconnected')[0];
  assert.equal(bye.body.screenshots_failed, 0);
  assert.ok(bye.body.screenshots >= 2, JSON.stringify(bye.body));
  const v = auditVerify(svc.dataDir);
  assert.equal(v.status, 0, v.out);
});

test('a failed expectation fails the run, and a tenant without CDP cannot run it', async () => {
  const s = await newSession(svc, 'a');
  const bad = await playwrightTest(s.url, { EXPECT_SAVED: 'Saved: Grace', PW_EXPECT_TIMEOUT_MS: '5000' });
  assert.equal(bad.code, 1, `the runner reports the failure:\n${bad.stdout}`);
  assert.match(bad.stdout, /1 failed/);
  assert.match(bad.stdout, /Saved: Grace/);

  // tenant c's policy does not offer CDP: the connection is refused with 403
  const denied = await playwrightTest(s.url.replace(/token=.*$/, `token=${svc.tokens.c}`));
  assert.notEqual(denied.code, 0);
  assert.match(denied.stdout, /403 Forbidden/);
  assert.match(denied.stdout, /does not offer CDP endpoints/);
});
