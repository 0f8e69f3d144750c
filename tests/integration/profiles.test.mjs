/*
 * Encrypted browser profiles end to end: real Chromium, the MCP SDK
 * client, the glassbox CLI, a cookie login on the fixture site.
 *
 * One data dir, several `glassbox mcp` processes on it (tenants acme and
 * beta, two sessions of acme). The tests run in order and build on each
 * other: log in and seal, reopen still logged in, one writer at a time,
 * a browser killed mid-session, tenant isolation, tampered blobs,
 * storageState export/import, revoke, expiry, key rotation.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import {
  assert,
  openGlassbox,
  startFixtureServer,
  callTool,
  ok,
  sc,
  dump,
  textOf,
  assertToolError,
  newDataDir,
  glassboxBin,
  listFiles,
  auditText,
  filesContaining,
  pollUntil,
  evaluate,
} from '../e2e/lib.mjs';
import { signIn, account as accountPage } from './profile_helpers.mjs';

let fixture;
let dataDir;
let acme; // the first session of tenant acme
const others = [];
let oldBlob; // version 1 of acme's profile, kept aside
let note; // the localStorage note of acme's profile

const url = (p) => fixture.url + p;

function cli(args) {
  return spawnSync(glassboxBin(), args, {
    env: { ...process.env, GLASSBOX_DATA_DIR: dataDir },
    encoding: 'utf8',
  });
}

async function openTenant(tenant) {
  const gb = await openGlassbox({ dataDir, env: { GLASSBOX_TENANT: tenant } });
  others.push(gb);
  return gb;
}

function blobsOf(tenant) {
  return listFiles(path.join(dataDir, 'tenants', tenant, 'profiles')).filter((f) => f.endsWith('.sealed'));
}

function errorCode(r) {
  return sc(r)?.error?.code;
}

async function openProfile(client, args) {
  return callTool(client, 'browser_session', { action: 'open', user: 'alice', ...args });
}

const login = (client) => signIn(client, fixture.url);
const account = (client) => accountPage(client, fixture.url);

/* The pid of the Chromium browser process glassbox (pid) started: its
 * child whose command line has a user-data-dir and no --type (helpers). */
function browserPidOf(pid) {
  for (const ent of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(ent)) continue;
    let st;
    let cmd;
    try {
      st = fs.readFileSync(`/proc/${ent}/stat`, 'latin1');
      cmd = fs.readFileSync(`/proc/${ent}/cmdline`, 'latin1');
    } catch {
      continue;
    }
    const fields = st.slice(st.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[1]) === pid && fields[0] !== 'Z' && cmd.includes('--user-data-dir=') && !cmd.includes('--type='))
      return Number(ent);
  }
  return 0;
}

before(async () => {
  fixture = await startFixtureServer();
  dataDir = newDataDir('glassbox-profiles-');
  acme = await openTenant('acme');
});

after(async () => {
  for (const gb of others) await gb.close();
  if (fixture) await fixture.close();
  if (dataDir && process.env.GLASSBOX_KEEP_DATA !== '1') fs.rmSync(dataDir, { recursive: true, force: true });
});

test('log in on a new profile and close it: sealed as version 1, nothing in clear on disk', async () => {
  let r = await openProfile(acme.client, { profile: 'work', create: true });
  assert.equal(r.isError, undefined, dump(r));
  assert.deepEqual(sc(r).profile, { name: 'work', user: 'alice', version: 0, readonly: false });
  await login(acme.client);
  const page = await account(acme.client);
  assert.match(page.text, /Signed in as alice/);
  assert.match(page.text, /Session cookie: present/);
  r = await ok(acme.client, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.saved, true, dump(r));
  assert.equal(sc(r).profile_closed.version, 1);

  const blobs = blobsOf('acme');
  assert.equal(blobs.length, 1, `one sealed blob: ${blobs}`);
  assert.equal(fs.statSync(blobs[0]).mode & 0o777, 0o600);
  oldBlob = fs.readFileSync(blobs[0]);
  const secrets = fixture.profileSecrets();
  assert.ok(secrets.length >= 3, `the site handed out a login, a session cookie and a note: ${secrets}`);
  for (const s of secrets) {
    assert.deepEqual(filesContaining(dataDir, s), [], `${s} must not be in clear in the data dir`);
    const shm = `/dev/shm/glassbox-${process.getuid()}`;
    if (fs.existsSync(shm)) assert.deepEqual(filesContaining(shm, s), [], `the clear copy is wiped`);
  }
});

test('reopened in a new session: still logged in, localStorage kept', async () => {
  await acme.close();
  acme = await openTenant('acme');
  const r = await openProfile(acme.client, { profile: 'work' });
  assert.equal(sc(r).profile.version, 1, dump(r));
  const page = await account(acme.client);
  assert.equal(page.title, 'Account', page.text);
  assert.match(page.text, /Signed in as alice/);
  assert.match(page.text, /Session cookie: present/, 'the session cookie came back too');
  note = await evaluate(acme.client, "() => localStorage.getItem('gb_note')");
  assert.ok(fixture.profileSecrets().includes(note), `the note the site stored first: ${note}`);
});

test('a second session on the profile is refused (who, since when); a read-only copy works', async () => {
  const second = await openTenant('acme');
  let r = await openProfile(second.client, { profile: 'work' });
  const text = assertToolError(r, 'second writer');
  assert.equal(errorCode(r), 'profile_busy', dump(r));
  assert.match(text, /in use by session [0-9a-f]+ \(pid \d+\) since 20\d\d-\d\d-\d\dT/);
  assert.match(text, /read-only/);
  r = await openProfile(second.client, { profile: 'work', readonly: true });
  assert.equal(sc(r).profile.readonly, true, dump(r));
  assert.match((await account(second.client)).text, /Signed in as alice/);
  r = await ok(second.client, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.saved, false);
  assert.match(sc(r).profile_closed.reason, /read-only/);
  await second.close();
  const show = JSON.parse(cli(['profile', 'show', 'work', '--tenant', 'acme', '--user', 'alice']).stdout);
  assert.equal(show.version, 1, 'the read-only copy sealed nothing');
  assert.equal(show.held_by.holder.startsWith('session '), true, JSON.stringify(show));
});

test('kill -9 the browser mid-session: nothing is sealed, the previous version is intact', async () => {
  await ok(acme.client, 'browser_navigate', { url: url('/second.html') });
  const pid = browserPidOf(acme.pid);
  assert.ok(pid > 0, 'the browser process of the first session');
  process.kill(pid, 'SIGKILL');
  await pollUntil(() => browserPidOf(acme.pid) !== pid);
  let r = await callTool(acme.client, 'browser_snapshot', {});
  const text = assertToolError(r, 'the call after the kill');
  assert.match(text, /crash/i);
  assert.match(text, /not sealed: version 1 is kept/);
  r = await ok(acme.client, 'browser_session', { action: 'status' });
  assert.equal(sc(r).profile, undefined, dump(r));
  assert.equal(sc(r).profile_closed.saved, false);
  const show = JSON.parse(cli(['profile', 'show', 'work', '--tenant', 'acme', '--user', 'alice']).stdout);
  assert.equal(show.version, 1);
  assert.equal(show.held_by, null, 'the hold was released');
  r = await openProfile(acme.client, { profile: 'work' });
  assert.equal(sc(r).profile.version, 1, dump(r));
  assert.match((await account(acme.client)).text, /Signed in as alice/);
  r = await ok(acme.client, 'browser_close', {});
  assert.equal(sc(r).profile_closed.saved, true, dump(r));
  assert.equal(sc(r).profile_closed.version, 2);
});

test('tenant beta sees none of acme\'s profiles, and acme\'s blob in beta\'s place does not open', async () => {
  const beta = await openTenant('beta');
  let r = await ok(beta.client, 'browser_session', { action: 'list' });
  assert.deepEqual(sc(r).profiles, [], dump(r));
  r = await openProfile(beta.client, { profile: 'work' });
  assert.equal(errorCode(r), 'profile_not_found', dump(r));
  assert.doesNotMatch(textOf(r), /acme/);
  const list = cli(['profile', 'list', '--tenant', 'beta', '--json']);
  assert.deepEqual(JSON.parse(list.stdout), []);
  const show = cli(['profile', 'show', 'work', '--tenant', 'beta', '--user', 'alice']);
  assert.notEqual(show.status, 0);
  assert.match(show.stderr, /no profile named work/);
  assert.equal(cli(['profile', 'export', 'work', '--tenant', 'beta', '--user', 'alice']).status, 1);

  // beta's own profile of the same name, then acme's blob copied over it
  r = await openProfile(beta.client, { profile: 'work', create: true });
  await ok(beta.client, 'browser_navigate', { url: url('/form.html') });
  r = await ok(beta.client, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.version, 1, dump(r));
  const [betaBlob] = blobsOf('beta');
  fs.copyFileSync(blobsOf('acme')[0], betaBlob);
  r = await openProfile(beta.client, { profile: 'work' });
  assert.equal(errorCode(r), 'profile_damaged', dump(r));
  assert.match(textOf(r), /does not open/);
  await beta.close();
});

test('a flipped byte, a truncated blob, an old version put back: clear errors, the current version intact', async () => {
  const [blob] = blobsOf('acme');
  const good = fs.readFileSync(blob);
  const flipped = Buffer.from(good);
  flipped[Math.floor(flipped.length / 2)] ^= 0x40;
  for (const [what, bytes] of [
    ['flipped byte', flipped],
    ['truncated', good.subarray(0, Math.floor(good.length / 2))],
    ['old version put back', oldBlob],
  ]) {
    fs.writeFileSync(blob, bytes);
    const r = await openProfile(acme.client, { profile: 'work' });
    assert.equal(errorCode(r), 'profile_damaged', `${what}: ${dump(r)}`);
    assert.match(textOf(r), /version 2 of profile work of user alice does not open/);
    assert.equal(JSON.parse(cli(['profile', 'show', 'work', '--tenant', 'acme', '--user', 'alice']).stdout).held_by, null);
  }
  fs.writeFileSync(blob, good);
  const r = await openProfile(acme.client, { profile: 'work' });
  assert.equal(sc(r).profile.version, 2, dump(r));
  assert.match((await account(acme.client)).text, /Signed in as alice/);
  await ok(acme.client, 'browser_session', { action: 'close', save: false });
});

test('storageState export and import round trip (Playwright format), export recorded', async () => {
  const out = path.join(dataDir, 'state.json');
  let r = cli(['profile', 'export', 'work', '--tenant', 'acme', '--user', 'alice', '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(fs.statSync(out).mode & 0o777, 0o600);
  const state = JSON.parse(fs.readFileSync(out, 'utf8'));
  const login = state.cookies.find((c) => c.name === 'gb_login');
  assert.ok(login, JSON.stringify(state.cookies.map((c) => c.name)));
  assert.equal(login.domain, '127.0.0.1');
  assert.equal(login.path, '/');
  assert.equal(login.httpOnly, true);
  assert.equal(login.secure, false);
  assert.equal(login.sameSite, 'Lax');
  assert.ok(login.expires > Date.now() / 1000, 'a persistent cookie keeps its expiry');
  assert.equal(state.cookies.find((c) => c.name === 'gb_tab').expires, -1, 'a session cookie');
  assert.deepEqual(state.origins, [{ origin: fixture.url, localStorage: [{ name: 'gb_note', value: note }] }]);
  const trail = auditText(dataDir, 'acme');
  assert.ok(trail.includes('"kind":"profile_exported"'), 'export recorded');
  assert.ok(trail.includes('"tool":"glassbox_profile_export"'), 'the export ran through the pipeline: its tool call is recorded');
  assert.ok(!trail.includes(login.value), 'the exported cookie values are never in the trail');
  assert.notEqual(cli(['profile', 'export', 'work', '--tenant', 'acme', '--user', 'alice', '-o', out]).status, 0,
    'an export never overwrites a file');

  r = cli(['profile', 'import', 'copy', out, '--tenant', 'acme', '--user', 'bob']);
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stdout, /version 1/);
  assert.ok(auditText(dataDir, 'acme').includes('"tool":"glassbox_profile_import"'), 'the import ran through the pipeline');
  fs.rmSync(out);
  r = await openProfile(acme.client, { profile: 'copy', user: 'bob' });
  assert.equal(sc(r).profile.version, 1, dump(r));
  const page = await account(acme.client);
  assert.match(page.text, /Signed in as alice/);
  assert.match(page.text, /Session cookie: present/);
  assert.equal(await evaluate(acme.client, "() => localStorage.getItem('gb_note')"), note);
  await ok(acme.client, 'browser_session', { action: 'close' });
});

test('revoke makes a profile unreadable, expiry refuses it, key rotation keeps profiles open', async () => {
  let r = cli(['profile', 'revoke', 'copy', '--tenant', 'acme', '--user', 'bob']);
  assert.equal(r.status, 0, r.stderr);
  let t = await openProfile(acme.client, { profile: 'copy', user: 'bob', readonly: true });
  assert.equal(errorCode(t), 'profile_revoked', dump(t));
  assert.match(textOf(t), /revoked .* cannot be opened again/);
  assert.match(auditText(dataDir, 'acme'), /"kind":"profile_revoked"/);

  r = cli(['profile', 'create', 'brief', '--ttl', '1', '--tenant', 'acme', '--user', 'alice']);
  assert.equal(r.status, 0, r.stderr);
  await new Promise((res) => setTimeout(res, 1300));
  t = await openProfile(acme.client, { profile: 'brief' });
  assert.equal(errorCode(t), 'profile_expired', dump(t));
  assert.equal(cli(['profile', 'show', 'brief', '--tenant', 'acme', '--user', 'alice']).status, 1, 'purged');

  r = cli(['keys', 'rotate']);
  assert.equal(r.status, 0, r.stderr);
  t = await openProfile(acme.client, { profile: 'work', readonly: true });
  assert.equal(sc(t).profile.version, 2, dump(t));
  await ok(acme.client, 'browser_session', { action: 'close' });

  const key = fs.readFileSync(path.join(dataDir, 'keys', 'master.key'), 'utf8').trim();
  for (const gb of others) assert.ok(!gb.stderr().includes(key), 'the master key is never logged');
  assert.ok(!r.stdout.includes(key) && !r.stderr.includes(key));
});

test('a client that goes away (end of input, then SIGTERM) is a clean end: the profile is sealed', async () => {
  const gb = await openGlassbox({ dataDir, env: { GLASSBOX_TENANT: 'gamma' } });
  let r = await openProfile(gb.client, { profile: 'home', create: true });
  assert.equal(r.isError, undefined, dump(r));
  await login(gb.client);
  await gb.close();

  const again = await openTenant('gamma');
  r = await openProfile(again.client, { profile: 'home' });
  assert.equal(sc(r).profile.version, 1, dump(r));
  const page = await account(again.client);
  assert.match(page.text, /Signed in as alice/);
  await ok(again.client, 'browser_session', { action: 'close', save: false });
});
