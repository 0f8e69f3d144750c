/*
 * `glassbox run`: the example flows of fixtures/flows/ against the fixture
 * shop, in real Chromium, as a CI job runs them: the exit status, the
 * JUnit XML (verdicts with expected and observed values, screenshots as
 * attachments that exist on disk), the HTML trail, pre-approval through
 * the policy, precise errors for bad flows, and a secret typed by a flow
 * that appears nowhere: not in the output, the reports or the data dir.
 */
import { test, before, after } from 'node:test';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, startFixtureServer, glassboxBin, REPO_ROOT, newDataDir, filesContaining, isPng,
} from '../e2e/lib.mjs';

const FLOWS = path.join(REPO_ROOT, 'fixtures', 'flows');
const POLICIES = path.join(REPO_ROOT, 'fixtures', 'policy');
let POLICY;
/* a secret no page, log or record could contain by chance */
const SECRET = `pw-${crypto.randomBytes(12).toString('hex')}`;
let fixture;
let work;

before(async () => {
  fixture = await startFixtureServer();
  work = newDataDir('glassbox-flows-');
  /* the secret comes from a --vars file, the URLs from the environment */
  fs.writeFileSync(path.join(work, 'vars.env'), `# test secrets\nSHOP_PASSWORD='${SECRET}'\n`, { mode: 0o600 });
  POLICY = portedPolicy('flows.json');
});

/* fixtures/policy/NAME with the fixture's port on each deny pattern (the
 * site listens on a random port, and a pattern without one may mean the
 * scheme's default ports only): the path of the copy in work. */
function portedPolicy(name) {
  const policy = JSON.parse(fs.readFileSync(path.join(POLICIES, name), 'utf8'));
  policy.egress.deny = (policy.egress.deny ?? []).map((h) => (h.includes(':') ? h : `${h}:${fixture.port}`));
  const file = path.join(work, name);
  fs.writeFileSync(file, JSON.stringify(policy));
  return file;
}

after(async () => {
  await fixture?.close();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/* Runs `glassbox run ARGS`; resolves {code, stdout, stderr}. */
function run(args, { env = {} } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(glassboxBin(), ['run', ...args], {
      cwd: work,
      env: {
        ...process.env,
        GLASSBOX_CONFIG: '',
        SHOP_URL: `http://shop.test:${fixture.port}`,
        PARTNER_URL: `http://evil.test:${fixture.port}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 120000);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/* The <testcase> element of a flow, as text. */
function testcase(xml, name) {
  const m = xml.match(new RegExp(`<testcase name="${name}"[\\s\\S]*?</testcase>`));
  assert.ok(m, `JUnit has a testcase "${name}": ${xml}`);
  return m[0];
}

/* Unescapes the XML entities libxml2 writes in attributes and text. */
function unxml(s) {
  return s.replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>')
    .replace(/&#10;/g, '\n').replace(/&amp;/g, '&');
}

/* The attachment property of a testcase: the path, checked to be a PNG on disk
 * and to be named in system-out too. */
function attachment(tc) {
  const m = tc.match(/<property name="attachment" value="([^"]+)"\/>/);
  assert.ok(m, `an attachment property: ${tc}`);
  const file = unxml(m[1]);
  assert.ok(path.isAbsolute(file), file);
  assert.ok(isPng(fs.readFileSync(file)), `${file} is a PNG`);
  assert.ok(unxml(tc).includes(`[[ATTACHMENT|${file}]]`), `system-out names ${file}: ${tc}`);
  return file;
}

test('the four example flows: verdicts, evidence and exit status as CI needs them', async () => {
  const dataDir = path.join(work, 'data');
  const junit = path.join(work, 'results', 'junit.xml');
  const report = path.join(work, 'results', 'trail.html');
  fs.mkdirSync(path.dirname(junit));
  const r = await run([
    path.join(FLOWS, 'checkout.json'), path.join(FLOWS, 'expect-fails.json'),
    path.join(FLOWS, 'blocked.json'), path.join(FLOWS, 'approval.json'),
    '-j', '2', '--config', POLICY, '--vars', path.join(work, 'vars.env'), '--data-dir', dataDir,
    '--junit', junit, '--report', report,
  ]);
  const out = r.stdout + r.stderr;
  assert.equal(r.code, 1, `one flow failing makes the run fail: ${out}`);
  assert.match(r.stdout, /^PASS checkout /m, out);
  assert.match(r.stdout, /^FAIL expect fails /m, out);
  assert.match(r.stdout, /4 flows: 1 passed, 3 failed/, out);

  const xml = fs.readFileSync(junit, 'utf8');
  assert.match(xml, /<testsuite name="glassbox run" tests="4" failures="3" errors="0"/, xml);
  /* the real output against the JUnit schema (xmllint: libxml2-utils) */
  const lint = spawnSync('xmllint', ['--noout', '--schema', path.join(REPO_ROOT, 'fixtures', 'junit', 'junit.xsd'), junit],
    { encoding: 'utf8' });
  assert.equal(lint.status, 0, `the JUnit XML validates: ${lint.error ?? ''}${lint.stderr}`);

  /* the passing checkout: no failure, the last page kept */
  const checkout = testcase(xml, 'checkout');
  assert.doesNotMatch(checkout, /<failure|<error/, checkout);
  assert.match(checkout, /classname="flows.checkout" file="[^"]*checkout.json" time="\d+\.\d{3}"/, checkout);
  assert.match(attachment(checkout), /results\/junit-attachments\/01-checkout\/step-11\.png$/);
  assert.match(unxml(checkout), /step 9 click role=button\[name="Place order"\]: passed/, checkout);

  /* the failed expectation: expected and observed values, where, and the screenshot */
  const fails = testcase(xml, 'expect fails');
  assert.match(fails, /<failure message="[^"]*text: expected &quot;Cart \(2\)&quot;, observed &quot;absent&quot;" type="expectation_failed"/, fails);
  assert.match(unxml(fails), /check text: expected "Cart \(2\)", observed "absent"/, fails);
  assert.match(unxml(fails), /failed at step 2 of 3 \(browser_click\)/, fails);
  assert.match(attachment(fails), /02-expect-fails\/step-02\.png$/);
  assert.doesNotMatch(fails, /step 3 /, 'the flow stops at the first failed step');

  /* the blocked domain: refused by policy, and the partner never saw a request */
  const blocked = testcase(xml, 'blocked domain');
  assert.match(blocked, /type="url_refused"/, blocked);
  assert.match(unxml(blocked), /evil\.test:\d+ is refused by the deny rule "evil\.test(:\d+)?"/, blocked);
  attachment(blocked);
  assert.equal(fixture.hits().requests['GET /deals'] ?? 0, 0, 'nothing reached the refused host');

  /* the approval: not pre-approved by this policy, so it fails with that reason */
  const approval = testcase(xml, 'cancel order');
  assert.match(approval, /type="approval_required"/, approval);
  assert.match(unxml(approval), /needs a person's approval \(risk rule destructive-click\): click button "Cancel order"/, approval);
  assert.match(unxml(approval), /pre-approve this action with a risk rule/, approval);
  /* a flow does not wait: nothing it prints says that a person is waited for */
  assert.doesNotMatch(unxml(approval), /waiting for a person/, approval);
  assert.doesNotMatch(out, /waiting for a person/, out);
  attachment(approval);

  /* the HTML trail of the run's sessions */
  const html = fs.readFileSync(report, 'utf8');
  assert.match(html, /<html/i);
  assert.match(html, /Place order/, 'the report shows the checkout');
  assert.match(html, /Cancel order/, 'and the held action');

  /* the secret was typed (the checkout passed its value check) and is nowhere */
  assert.ok(!out.includes(SECRET), 'not in the output');
  assert.ok(!xml.includes(SECRET), 'not in the JUnit XML');
  assert.ok(!html.includes(SECRET), 'not in the report');
  assert.deepEqual(filesContaining(dataDir, SECRET), [], 'not in the data dir');
  assert.deepEqual(filesContaining(path.dirname(junit), SECRET), [], 'not beside the reports');
});

test('a policy that pre-approves the action lets the approval flow pass', async () => {
  const r = await run([
    path.join(FLOWS, 'approval.json'), '--config', portedPolicy('flows-cancel-approved.json'),
    '--data-dir', path.join(work, 'data2'),
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /^PASS cancel order /m, r.stdout);
});

test('a step is retried only when the flow asks for it', async () => {
  const step = { click: { role: 'button', name: 'Claim offer' }, expect: { text: 'Offer claimed' } };
  const flow = (name, extra) => {
    const file = path.join(work, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify({
      name, steps: [{ navigate: '${SHOP_URL}/shop/offer.html' }, { ...step, ...extra }],
    }));
    return file;
  };
  const junit = path.join(work, 'retries.xml');
  const r = await run([
    flow('patient', { retries: 10, retry_delay_ms: 1500 }), flow('hasty', {}), '-j', '2',
    '--config', POLICY, '--data-dir', path.join(work, 'data4'), '--junit', junit,
  ]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const xml = unxml(fs.readFileSync(junit, 'utf8'));
  const patient = testcase(xml, 'patient');
  assert.doesNotMatch(patient, /<failure/, patient);
  assert.match(patient, /step 2 attempt 1 failed \(.*no button named "Claim offer"|step 2 attempt 1 failed \(.*no element with role button/, patient);
  assert.match(patient, /step 2 click role=button\[name="Claim offer"\]: passed in \d+ ms \(attempt [2-9]\)/, patient);
  const hasty = testcase(xml, 'hasty');
  assert.match(hasty, /<failure message=".*\(no_match\)" type="no_match"/, hasty);
  assert.doesNotMatch(hasty, /retrying/, 'no retries unless the step asks');
  assert.match(hasty, /FAILED in \d+ ms \(attempt 1\)/, hasty);
});

test('bad input exits 2 with the file, the step and the field, before any browser starts', async () => {
  const bad = path.join(work, 'bad.json');
  fs.writeFileSync(bad, JSON.stringify({
    name: 'bad', steps: [{ navigate: 'http://shop.test/' }, { click: { role: 'button', label: 'Save' } }],
  }));
  let r = await run([bad, '--data-dir', path.join(work, 'data3')]);
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /bad\.json: step 2 \(click\): field "click": a target is \{"role": "button", "name": "Save"\}/, r.stderr);
  assert.ok(!fs.existsSync(path.join(work, 'data3')), 'nothing started');

  r = await run([path.join(FLOWS, 'checkout.json'), '--data-dir', path.join(work, 'data3')], { env: { SHOP_PASSWORD: '' } });
  assert.equal(r.code, 2, r.stdout + r.stderr);
  assert.match(r.stderr, /checkout\.json: step 5 \(type\): field "text": variable \$\{SHOP_PASSWORD\} is not set/, r.stderr);

  r = await run([path.join(work, 'missing.json')]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /missing\.json: cannot read the flow: No such file or directory/, r.stderr);

  r = await run([path.join(FLOWS, 'checkout.json'), '-j', '0']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /-j 0: give a number of parallel sessions from 1 to/, r.stderr);

  r = await run([path.join(FLOWS, 'checkout.json'), path.join(FLOWS, 'blocked.json'), '--profile', 'qa',
    '--save-profile'], { env: { SHOP_PASSWORD: 'x' } });
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--save-profile saves what one flow did: give one flow \(2 given\)/, r.stderr);
});

test('--save-profile keeps a login; --profile starts every flow from it on a read-only copy', async () => {
  const data = path.join(work, 'data-profile');
  const flow = (name, steps) => {
    const file = path.join(work, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify({ name, secrets: ['SHOP_PASSWORD'], steps }));
    return file;
  };
  const login = flow('login', [
    { navigate: '${SHOP_URL}/profile/login.html', expect: { title: 'Sign in' } },
    { type: { role: 'textbox', name: 'User' }, text: 'qa-user' },
    { type: { css: 'input[name=password]' }, text: '${SHOP_PASSWORD}' },
    { click: { role: 'button', name: 'Sign in' }, expect: { text: 'Signed in as qa-user' } },
  ]);
  const account = (name) => flow(name, [
    { navigate: '${SHOP_URL}/profile/account', expect: { text: 'Signed in as qa-user' } },
  ]);
  const common = ['--data-dir', data, '--config', POLICY, '--vars', path.join(work, 'vars.env')];

  /* without the profile the account page asks for a login: the check can fail */
  let r = await run([account('anonymous'), ...common]);
  assert.equal(r.code, 1, r.stdout + r.stderr);

  r = await run([login, '--profile', 'qa', '--save-profile', ...common]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  r = await run([account('first'), account('second'), '-j', '2', '--profile', 'qa', ...common]);
  assert.equal(r.code, 0, r.stdout + r.stderr);

  /* the read-only runs did not seal anything back: one version, and the secret is nowhere */
  const ls = spawnSync(glassboxBin(), ['profile', 'show', 'qa', '--data-dir', data], { encoding: 'utf8' });
  assert.equal(ls.status, 0, ls.stderr);
  assert.match(ls.stdout, /version\W+1\b/, ls.stdout);
  assert.ok(!r.stdout.includes(SECRET) && !r.stderr.includes(SECRET));
});

test('a type step with "secret" types a stored secret, bound to its host, that appears nowhere', async () => {
  const data = path.join(work, 'data-secret');
  const value = `stored-${crypto.randomBytes(12).toString('hex')}`;
  const set = spawnSync(glassboxBin(), ['secret', 'set', 'SHOP_LOGIN', '--hosts', 'shop.test', '--data-dir', data],
    { input: value, encoding: 'utf8' });
  assert.equal(set.status, 0, set.stderr);
  const flow = (name, url) => {
    const file = path.join(work, `${name}.json`);
    fs.writeFileSync(file, JSON.stringify({ name, steps: [
      { navigate: `${url}/profile/login.html`, expect: { title: 'Sign in' } },
      { type: { role: 'textbox', name: 'User' }, text: 'qa-user' },
      { type: { css: 'input[name=password]' }, secret: 'SHOP_LOGIN' },
      { click: { role: 'button', name: 'Sign in' }, expect: { text: 'Signed in as qa-user' } },
    ] }));
    return file;
  };
  const junit = path.join(work, 'secret-junit.xml');
  const policy = path.join(work, 'secret-policy.json');
  fs.writeFileSync(policy, JSON.stringify({ egress: {
    allow_private: ['127.0.0.1:*', '[::1]:*'], hosts: { 'shop.test': '127.0.0.1', 'other.test': '127.0.0.1' } } }));
  const r = await run([flow('stored-secret', `http://shop.test:${fixture.port}`),
    flow('wrong-host', `http://other.test:${fixture.port}`), '-j', '2', '--junit', junit,
    '--data-dir', data, '--config', policy]);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  const xml = fs.readFileSync(junit, 'utf8');
  assert.doesNotMatch(testcase(xml, 'stored-secret'), /<failure/);
  assert.match(testcase(xml, 'wrong-host'), /<failure message="[^"]*secret_refused/);
  const grep = spawnSync('grep', ['-rlF', value, data], { encoding: 'utf8' });
  assert.equal(grep.stdout, '', `the secret is in ${grep.stdout}`);
  assert.ok(!r.stdout.includes(value) && !r.stderr.includes(value) && !xml.includes(value));
});
