/*
 * `glassbox policy check FILE`: the effective policy with its defaults,
 * its hash and its warnings, or every error at once; and the warnings
 * glassbox serve prints at start about a policy that opens every port of
 * a loopback address.
 */
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assert, REPO_ROOT, glassboxBin, callTool } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-policy-check-'));
const write = (name, obj) => {
  const f = path.join(tmp, name);
  fs.writeFileSync(f, typeof obj === 'string' ? obj : JSON.stringify(obj, null, 2));
  return f;
};
const check = (...args) => spawnSync(glassboxBin(), ['policy', 'check', ...args], { encoding: 'utf8' });

test('a valid policy: the effective policy with every default, its hash, and its warnings', () => {
  const f = write('shop.json', { egress: { allow: ['shop.test', 'api.test:8443', 'dev.test:*'], hosts: { 'dev.test': '127.0.0.1' }, allow_private: ['127.0.0.1:8080'] } });
  const r = check(f);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /: valid \(sha256:[0-9a-f]{64}\)/);
  assert.match(r.stdout, /"pattern": "shop\.test",\s*"ports": "80, 443"/);
  assert.match(r.stdout, /"pattern": "api\.test:8443",\s*"ports": "8443"/);
  assert.match(r.stdout, /"default": "deny"/);
  assert.match(r.stdout, /"hidden_text": "flag"/);
  assert.match(r.stdout, /"evaluate": "approve"/);
  assert.match(r.stdout, /"approval_ttl_seconds": 300/);
  assert.match(r.stdout, /warning: policy\.egress\.allow\[2\]: "dev\.test:\*" allows every port of a loopback or private address/);
  assert.doesNotMatch(r.stdout, /allow_private\[0\]: every port/);

  const j = JSON.parse(check(f, '--json').stdout);
  assert.equal(j.valid, true);
  assert.equal(j.policies[0].effective.egress.allow[0].ports, '80, 443');
  assert.equal(j.policies[0].warnings.length, 1, JSON.stringify(j.policies[0].warnings));
  // the same policy, spaced and ordered differently, has the same hash
  const again = write('shop2.json', JSON.stringify({ egress: { allow_private: ['127.0.0.1:8080'], hosts: { 'dev.test': '127.0.0.1' }, allow: ['shop.test', 'api.test:8443', 'dev.test:*'] } }));
  assert.equal(JSON.parse(check(again, '--json').stdout).policies[0].effective.hash, j.policies[0].effective.hash);
});

test('an invalid policy: every error at once, each with its place, exit 2', () => {
  const f = write('bad.json', {
    egress: { allow: ['ok.test', '*foo.test', 'x.test/path'], allow_private: ['127.0.0.1:http'] },
    limits: { browser_memory_mb: 1 },
    page_content: { hidden_text: 'hide' },
  });
  const r = check(f);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stdout, /NOT VALID/);
  for (const want of [
    /policy\.egress\.allow\[1\]: "\*foo\.test" is not a host pattern/,
    /policy\.egress\.allow\[2\]: "x\.test\/path" is not a host pattern/,
    /policy\.egress\.allow_private\[0\]: "127\.0\.0\.1:http"/,
    /policy\.limits\.browser_memory_mb must be a whole number from 64/,
    /policy\.page_content\.hidden_text must be "flag" or "drop"/,
  ])
    assert.match(r.stdout, want);
  assert.doesNotMatch(r.stdout, /allow\[0\]/);
  const j = JSON.parse(check(f, '--json').stdout);
  assert.equal(j.valid, false);
  assert.equal(j.policies[0].errors.length, 5, JSON.stringify(j));
});

test('a service config: each tenant checked and named; unreadable files and bad usage exit 2', () => {
  const f = write('serve.json', { tenants: { good: { policy: { egress: { allow: ['a.test'] } } }, bad: { policy: { egress: { deny: 'x' } } } } });
  const r = check(f);
  assert.equal(r.status, 2, r.stdout + r.stderr);
  assert.match(r.stdout, /tenants\.good\.policy of .*serve\.json: valid/);
  assert.match(r.stdout, /tenants\.bad\.policy of .*serve\.json: NOT VALID\npolicy\.egress\.deny must be an array/);
  assert.equal(check(path.join(tmp, 'missing.json')).status, 2);
  assert.equal(check(write('broken.json', '{"egress": ')).status, 2);
  assert.equal(check().status, 2);
  const help = check('--help');
  assert.equal(help.status, 0);
  assert.match(help.stdout, /usage: glassbox policy check FILE/);
  // the shipped fixtures stay valid
  for (const name of fs.readdirSync(path.join(REPO_ROOT, 'fixtures', 'policy')))
    assert.equal(check(path.join(REPO_ROOT, 'fixtures', 'policy', name)).status, 0, name);
});

test('glassbox serve warns at start about every port of a loopback address, naming the tenant', async () => {
  const svc = await startServe({
    tenants: { shop: { policy: { egress: { allow: ['shop.test:*'], allow_private: ['127.0.0.1:*'], hosts: { 'shop.test': '127.0.0.1' } } } } },
    prelaunch: false,
  });
  try {
    assert.match(svc.stderr(), /glassbox serve: warning: policy\.egress\.allow\[0\]: "shop\.test:\*" allows every port of a loopback or private address.*\(in tenants\.shop\.policy of /);
    assert.match(svc.stderr(), /warning: policy\.egress\.allow_private\[0\]: every port/);
    // a refusal of one of its sessions shows the line to add, in that tenant's policy
    const { client } = await svc.connect('shop');
    const r = await callTool(client, 'browser_navigate', { url: 'http://other.test/' });
    assert.equal(r.isError, true, JSON.stringify(r));
    const text = r.content.map((c) => c.text || '').join('\n');
    assert.match(text, /rule egress-not-allowed\)[^]*To allow it, add to tenants\.shop\.policy of [^:]*serve[^:]*\.json: "egress": \{"allow": \["other\.test"\]\}/, text);
    await client.close();
  } finally {
    await svc.stop('SIGTERM');
  }
});

test('glassbox init warns about every port of a loopback address in the policy it is given', () => {
  const f = write('init.json', { egress: { allow_private: ['127.0.0.1:*'] } });
  const data = fs.mkdtempSync(path.join(tmp, 'data-'));
  const r = spawnSync(glassboxBin(), ['init', '--config', f, '--data-dir', data], { encoding: 'utf8', timeout: 120000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.match(r.stderr, /glassbox init: warning: policy\.egress\.allow_private\[0\]: every port of a loopback or private address is allowed.*\(in .*init\.json\)/);
  const quiet = spawnSync(glassboxBin(), ['init', '--config', write('quiet.json', { egress: { allow_private: ['127.0.0.1:8080'] } }), '--data-dir', data], { encoding: 'utf8', timeout: 120000 });
  assert.equal(quiet.status, 0, quiet.stdout + quiet.stderr);
  assert.doesNotMatch(quiet.stderr, /warning: policy/);
});
