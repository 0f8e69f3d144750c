/*
 * Chromium's own requests (component updates, account checks), which no
 * page made: glassbox switches off what a launch flag can, and what is
 * left is refused by the egress proxy like any request, counted and
 * audited under the rule "browser-background", and kept out of the
 * `blocked` list of the action, which is about what the page did. A page's
 * own request to one of those hosts is still reported.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assert, openGlassbox, startFixtureServer, callTool, sc, dump, newDataDir, auditText, glassboxBin } from '../e2e/lib.mjs';

let fixture;
let gb;
let dir;
let config;
const blocked = [];

async function call(name, args) {
  const r = await callTool(gb.client, name, args);
  for (const b of sc(r).blocked || []) blocked.push(b);
  return r;
}

/* The refusals of the audit log. */
function auditedRefusals() {
  return auditText(dir, 'local')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .map((rec) => rec.body?.refusal)
    .filter(Boolean);
}

before(async () => {
  fixture = await startFixtureServer();
  dir = newDataDir('glassbox-background-');
  config = path.join(dir, 'policy.json');
  // only the fixture site: everything Chromium asks for on its own is refused
  fs.writeFileSync(config, JSON.stringify({
    egress: { allow: ['127.0.0.1:*'], allow_private: ['127.0.0.1:*'] },
    risk: { evaluate: 'allow' },
  }));
  gb = await openGlassbox({ dataDir: dir, config });
});

after(async () => {
  await gb?.close();
  await fixture?.close();
  gb?.removeDataDir();
});

test("the browser's own requests are refused and audited, and absent from blocked", async () => {
  const r = await call('browser_navigate', { url: `${fixture.url}/second.html` });
  assert.ok(!r.isError, dump(r));
  // Chromium asks for its components and accounts soon after it starts
  const end = Date.now() + 20000;
  let own = [];
  while (Date.now() < end) {
    await call('browser_evaluate', { function: '() => 1' });
    own = auditedRefusals().filter((x) => x.rule === 'browser-background');
    if (own.length > 0) break;
    await new Promise((res) => setTimeout(res, 250));
  }
  assert.ok(own.length > 0, `the audit log holds the browser's own refusals: ${auditText(dir, 'local').slice(-3000)}`);
  for (const x of own) {
    assert.equal(x.layer, 'proxy', JSON.stringify(x));
    assert.equal(x.browser_own, true, JSON.stringify(x));
    assert.equal(x.policy_rule, 'egress-not-allowed', JSON.stringify(x));
  }
  const ownHosts = new Set(own.map((x) => x.host));
  assert.deepEqual(blocked.filter((b) => b.rule === 'browser-background' || ownHosts.has(b.host)), [], `blocked holds only the page's refusals: ${JSON.stringify(blocked)}`);
  // the network-time query is switched off at launch
  assert.ok(!auditedRefusals().some((x) => (x.url || '').includes('clients2.google.com/time/')), 'no network time query');
});

test("a page's own request to one of those hosts is still in blocked", async () => {
  blocked.length = 0;
  await call('browser_navigate', { url: `${fixture.url}/second.html` });
  const r = await call('browser_evaluate', {
    function: `async () => { try { await fetch('https://update.googleapis.com/from-the-page', { mode: 'no-cors' }); return 'reached'; } catch (e) { return 'refused'; } }`,
  });
  assert.equal(sc(r).result, 'refused', dump(r));
  await call('browser_evaluate', { function: '() => 1' });
  const mine = blocked.filter((b) => (b.url || '').includes('/from-the-page'));
  assert.ok(mine.length > 0, `the page's refusal is reported: ${JSON.stringify(blocked)}`);
  for (const b of mine) {
    assert.equal(b.rule, 'egress-not-allowed', JSON.stringify(b));
    assert.notEqual(b.browser_own, true, JSON.stringify(b));
  }
});

test("the session's manifest carries the hash glassbox policy check shows for its policy", () => {
  const check = spawnSync(glassboxBin(), ['policy', 'check', config, '--json'], { encoding: 'utf8' });
  assert.equal(check.status, 0, check.stdout + check.stderr);
  const hash = JSON.parse(check.stdout).policies[0].effective.hash;
  assert.match(hash, /^sha256:[0-9a-f]{64}$/);
  const opened = auditText(dir, 'local')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l))
    .filter((rec) => rec.kind === 'session_opened');
  assert.ok(opened.length > 0, 'a session_opened record');
  for (const rec of opened) assert.equal(`sha256:${rec.body.manifest.policy_sha256}`, hash, JSON.stringify(rec.body.manifest));
});
