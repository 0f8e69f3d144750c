/*
 * replicas_profiles.test.mjs - one tenant's profile between two running
 * `glassbox serve` replicas, each with its own data dir, sharing one
 * PostgreSQL (a throwaway server: profiles' metadata and one-writer
 * holds) and one real S3-API server on loopback (tests/e2e/s3_server.mjs:
 * the sealed versions and the tenant key), as a StatefulSet's pods do.
 * The two replicas share the master and audit keys (one Secret) and
 * nothing else.
 *
 * Both replicas open the same profile for writing at the same moment:
 * exactly one wins, the other gets profile_busy naming the winner; the
 * winner logs in on the fixture site and closes (sealed, put in the
 * bucket, no sealed file on either disk); then the other replica opens it
 * and is logged in, so the state travelled through the bucket. A byte
 * changed in the bucket's object: profile_damaged, the profile neither
 * opened nor held; put back, it opens again. `glassbox profile --store`
 * on a third data dir (the master key only) shows and exports it. The
 * object store stopped: a save says so and keeps the last good version,
 * an open says so and holds nothing, and both sessions go on.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import { spawn, spawnSync } from 'node:child_process';
import path from 'node:path';
import { assert, startFixtureServer, callTool, ok, sc, dump, textOf, assertToolError, newDataDir, listFiles, filesContaining, evaluate, glassboxBin } from '../e2e/lib.mjs';
import { startS3 } from '../e2e/s3_server.mjs';
import { startServe } from './serve_helpers.mjs';
import { startPostgres } from './postgres_helpers.mjs';

let fixture;
let pg;
let s3;
let work;
let objectStore;
const replicas = {};
const sessions = {};

const url = (p) => fixture.url + p;

/* Starts replica name on its own data dir (keys: the shared Secret's). */
async function startReplica(name, dataDir, tokens) {
  const svc = await startServe({
    tenants: { acme: {} },
    dataDir,
    tokens,
    store: { postgres: pg.url },
    extra: { object_store: objectStore, replica: { id: name, audit_ship_interval_ms: 500 } },
  });
  replicas[name] = svc;
  return svc;
}

function openProfile(client, args = {}) {
  return callTool(client, 'browser_session', { action: 'open', profile: 'shared', user: 'alice', ...args });
}

async function login(client) {
  await ok(client, 'browser_navigate', { url: url('/profile/login.html') });
  await ok(client, 'browser_type', { target: 'input[name=user]', text: 'alice' });
  await ok(client, 'browser_type', { target: 'input[name=password]', text: 'correct horse' });
  const r = await ok(client, 'browser_click', { target: 'button[type=submit]' });
  assert.equal(sc(r).title, 'Account', dump(r));
}

/* The account page as the browser sees it. */
async function accountText(client) {
  await ok(client, 'browser_navigate', { url: url('/profile/account') });
  return evaluate(client, '() => document.body.innerText');
}

/* The profile's row in PostgreSQL. */
function row() {
  const rows = pg.query(`SELECT id, version, sealed_sha256, held_pid, held_by FROM prof_profiles WHERE tenant = 'acme' AND "user" = 'alice' AND name = 'shared'`);
  assert.equal(rows.length, 1, JSON.stringify(rows));
  const [id, version, sha, heldPid, heldBy] = rows[0];
  return { id, version: Number(version), sha, heldPid: Number(heldPid), heldBy };
}

/* `glassbox profile ARGS --store store.json` on data dir dir: {status,
 * stdout, stderr}. Not spawnSync: the S3 server's front runs in this
 * process. */
function profileCli(dir, args) {
  return new Promise((resolve) => {
    const p = spawn(glassboxBin(), ['profile', ...args, '--store', path.join(work, 'store.json'), '--tenant', 'acme', '--user', 'alice', '--data-dir', dir], { env: { ...process.env, GLASSBOX_STORE_POSTGRES: '' } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

const sealedFiles = (dataDir) => listFiles(path.join(dataDir, 'tenants')).filter((f) => f.endsWith('.sealed'));

before(async () => {
  pg = await startPostgres();
  fixture = await startFixtureServer();
  s3 = await startS3({ bucket: 'profiles' });
  work = newDataDir('glassbox-replica-profiles-');
  fs.writeFileSync(path.join(work, 'akid'), s3.accessKeyId + '\n', { mode: 0o600 });
  fs.writeFileSync(path.join(work, 'secret'), s3.secretAccessKey + '\n', { mode: 0o600 });
  objectStore = { s3: { endpoint: s3.endpoint, bucket: 'profiles', path_style: true, access_key_id_file: path.join(work, 'akid'), secret_access_key_file: path.join(work, 'secret') } };
  fs.writeFileSync(path.join(work, 'store.json'), JSON.stringify({ object_store: objectStore, store: { postgres: pg.url } }), { mode: 0o600 });
  // the keys as docs/deploy.md makes them (glassbox keys init), then the
  // second replica gets the master key and the audit key pair, as one
  // Kubernetes Secret gives them; no tenant key, no profile
  const dir1 = newDataDir('glassbox-replica-p1-');
  const init = spawnSync(glassboxBin(), ['keys', 'init'], { env: { ...process.env, GLASSBOX_DATA_DIR: dir1 }, encoding: 'utf8' });
  assert.equal(init.status, 0, init.stdout + init.stderr);
  const r1 = await startReplica('r1', dir1);
  const dir2 = newDataDir('glassbox-replica-p2-');
  fs.mkdirSync(path.join(dir2, 'keys'), { mode: 0o700 });
  for (const f of fs.readdirSync(path.join(dir1, 'keys')))
    if (fs.statSync(path.join(dir1, 'keys', f)).isFile()) fs.copyFileSync(path.join(dir1, 'keys', f), path.join(dir2, 'keys', f));
  assert.ok(fs.existsSync(path.join(dir2, 'keys', 'master.key')));
  await startReplica('r2', dir2, r1.tokens);
  for (const name of ['r1', 'r2']) sessions[name] = await replicas[name].connect('acme');
});

after(async () => {
  for (const svc of Object.values(replicas)) {
    await svc.stop('SIGTERM');
    svc.killLeftovers();
    svc.removeDataDir();
  }
  if (fixture) await fixture.close();
  if (s3) await s3.stop();
  if (pg) await pg.stop();
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

let winner;
let loser;
let winnerHolder; // "session <id>": the winner's hold

test('two replicas open one profile for writing at once: exactly one wins, the other gets profile_busy naming it', async () => {
  const [a, b] = await Promise.all([openProfile(sessions.r1.client, { create: true }), openProfile(sessions.r2.client, { create: true })]);
  const results = { r1: a, r2: b };
  const won = Object.keys(results).filter((n) => !results[n].isError);
  assert.equal(won.length, 1, `exactly one replica opened it: r1 ${dump(a)}\nr2 ${dump(b)}`);
  winner = won[0];
  loser = winner === 'r1' ? 'r2' : 'r1';
  assert.deepEqual(sc(results[winner]).profile, { name: 'shared', user: 'alice', version: 0, readonly: false });
  const text = assertToolError(results[loser], `the open on ${loser}`);
  assert.equal(sc(results[loser]).error?.code, 'profile_busy', dump(results[loser]));
  assert.match(text, /profile shared of user alice (is in use by session|was just opened by another session)/);
  assert.match(text, /read-only/);
  // the hold is in PostgreSQL, in the name of the winner's session
  const r = row();
  assert.match(r.heldBy, /^session [0-9a-f]+$/);
  assert.ok(r.heldPid > 0);
  winnerHolder = r.heldBy;
  // asked again, the loser is told who holds it and since when
  const again = await openProfile(sessions[loser].client);
  assert.equal(sc(again).error?.code, 'profile_busy', dump(again));
  assert.match(textOf(again), new RegExp(`is in use by ${winnerHolder} \\(pid ${r.heldPid}\\) since 20\\d\\d-`));
});

test('the winner logs in and closes: sealed into the bucket, no sealed file on either disk, nothing in clear', async () => {
  const c = sessions[winner].client;
  await login(c);
  assert.match(await accountText(c), /Signed in as alice/);
  const r = await ok(c, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.saved, true, dump(r));
  assert.equal(sc(r).profile_closed.version, 1);
  const meta = row();
  assert.equal(meta.version, 1);
  assert.match(meta.sha, /^[0-9a-f]{64}$/);
  assert.equal(meta.heldPid, 0, 'the hold is released');
  assert.ok(fs.existsSync(s3.objectPath(`tenants/acme/profiles/${meta.id}/${meta.sha}`)), 'the sealed version is in the bucket under its digest');
  assert.ok(fs.existsSync(s3.objectPath('tenants/acme/keys/tenant.key')), 'the tenant key (wrapped) is in the bucket');
  for (const name of ['r1', 'r2']) assert.deepEqual(sealedFiles(replicas[name].dataDir), [], `no sealed file in ${name}'s data dir`);
  const bucketDir = path.dirname(s3.objectPath('x'));
  const secrets = fixture.profileSecrets();
  assert.ok(secrets.length >= 2, `the site handed out a login and a session cookie: ${secrets}`);
  for (const s of secrets) {
    for (const name of ['r1', 'r2']) assert.deepEqual(filesContaining(replicas[name].dataDir, s), [], `${s} is not in clear in ${name}'s data dir`);
    assert.deepEqual(filesContaining(bucketDir, s), [], `${s} is not in clear in the bucket`);
  }
});

test('then the other replica opens it and is logged in: the profile travelled through the bucket', async () => {
  const c = sessions[loser].client;
  let r = await openProfile(c);
  assert.equal(r.isError, undefined, dump(r));
  assert.deepEqual(sc(r).profile, { name: 'shared', user: 'alice', version: 1, readonly: false });
  const held = row().heldBy;
  assert.match(held, /^session [0-9a-f]+$/);
  assert.notEqual(held, winnerHolder, 'held by the other replica\'s session now');
  const page = await accountText(c);
  assert.match(page, /Signed in as alice/);
  assert.match(page, /Session cookie: present/);
  // and the first replica is now the one refused
  const busy = await openProfile(sessions[winner].client);
  assert.equal(sc(busy).error?.code, 'profile_busy', dump(busy));
  r = await ok(c, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.saved, true, dump(r));
  assert.equal(sc(r).profile_closed.version, 2);
  assert.equal(row().version, 2);
});

test('a byte changed in the bucket: profile_damaged, neither opened nor held; put back, it opens', async () => {
  const meta = row();
  const file = s3.objectPath(`tenants/acme/profiles/${meta.id}/${meta.sha}`);
  const good = fs.readFileSync(file);
  const bad = Buffer.from(good);
  bad[Math.floor(bad.length / 2)] ^= 0x40;
  fs.writeFileSync(file, bad);
  const c = sessions[winner].client;
  let r = await openProfile(c);
  assert.equal(sc(r).error?.code, 'profile_damaged', dump(r));
  assert.match(textOf(r), new RegExp(`version 2 of profile shared of user alice does not open: its sealed object tenants/acme/profiles/${meta.id}/${meta.sha} in s3://profiles/ at .* was altered`));
  r = await ok(c, 'browser_session', { action: 'status' });
  assert.equal(sc(r).profile, undefined, dump(r));
  assert.equal(row().heldPid, 0, 'not held');
  assert.equal(row().version, 2, 'left as it is');
  fs.writeFileSync(file, good);
  r = await openProfile(c);
  assert.equal(sc(r).profile?.version, 2, dump(r));
  assert.match(await accountText(c), /Signed in as alice/);
  await ok(c, 'browser_session', { action: 'close', save: false });
});

test('glassbox profile --store: a data dir with the master key only shows and exports the replicas\' profile; one without it is told why not', async () => {
  const dir = newDataDir('glassbox-replica-cli-');
  fs.mkdirSync(path.join(dir, 'keys'), { mode: 0o700 });
  fs.copyFileSync(path.join(replicas.r1.dataDir, 'keys', 'master.key'), path.join(dir, 'keys', 'master.key'));
  let r = await profileCli(dir, ['show', 'shared']);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  assert.equal(JSON.parse(r.stdout).version, 2, r.stdout);
  assert.equal(JSON.parse(r.stdout).sealed_in, 'object_store', r.stdout);
  const out = path.join(work, 'state.json');
  r = await profileCli(dir, ['export', 'shared', '-o', out]);
  assert.equal(r.status, 0, r.stdout + r.stderr);
  const state = JSON.parse(fs.readFileSync(out, 'utf8'));
  const names = state.cookies.map((c) => c.name);
  assert.ok(names.includes('gb_login') && names.includes('gb_tab'), `the site's cookies travelled: ${names}`);
  assert.deepEqual(sealedFiles(dir), [], 'nothing sealed on the exporting data dir');
  // a data dir with a master key of its own cannot open the shared tenant key
  const other = newDataDir('glassbox-replica-cli-other-');
  r = await profileCli(other, ['export', 'shared', '-o', path.join(work, 'other.json')]);
  assert.notEqual(r.status, 0, r.stdout);
  assert.match(r.stderr, /the key of tenant acme in the object store \(tenants\/acme\/keys\/tenant\.key in s3:\/\/profiles\/ at .*\) was wrapped by master key [0-9a-f]{16}, which this data dir does not have: restore that master key, or name it in \$GLASSBOX_MASTER_KEY_OTHER_FILE while a rotation is under way \(every replica must have the same master key: one Secret\)/);
  assert.equal(fs.existsSync(path.join(work, 'other.json')), false);
  for (const d of [dir, other]) fs.rmSync(d, { recursive: true, force: true });
});

/* The digests of the profile's versions in the bucket, sorted. */
function bucketVersions(id) {
  const dir = path.dirname(s3.objectPath(`tenants/acme/profiles/${id}/x`));
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('._S3rver_object'))
    .map((f) => f.slice(0, -'._S3rver_object'.length))
    .sort();
}

test('each save keeps the new version and the one before it in the bucket, and removes the older ones', async () => {
  const before = row();
  assert.equal(bucketVersions(before.id).length, 2, 'versions 1 and 2');
  assert.ok(bucketVersions(before.id).includes(before.sha));
  const c = sessions[winner].client;
  let r = await openProfile(c);
  assert.equal(sc(r).profile?.version, 2, dump(r));
  r = await ok(c, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.version, 3, dump(r));
  const after = row();
  assert.deepEqual(bucketVersions(after.id), [before.sha, after.sha].sort(), 'version 1 removed; 2 (the one before) and 3 kept');
  r = await openProfile(sessions[loser].client);
  assert.equal(sc(r).profile?.version, 3, dump(r));
  assert.match(await accountText(sessions[loser].client), /Signed in as alice/);
  await ok(sessions[loser].client, 'browser_session', { action: 'close', save: false });
});

test('the object store down: an open says it cannot reach it and holds nothing, a save keeps the last good version, the sessions go on', async () => {
  // a session that has the profile open when the store goes away
  const holder = sessions[loser].client;
  let r = await openProfile(holder);
  assert.equal(sc(r).profile?.version, 3, dump(r));
  await s3.stop();
  s3 = null;
  r = await callTool(holder, 'browser_session', { action: 'close' });
  assert.equal(sc(r).error?.code, 'profile_not_saved', dump(r));
  assert.equal(sc(r).profile_closed.saved, false, dump(r));
  assert.match(textOf(r), /cannot reach the object store s3:\/\/profiles\/ at http:\/\/127\.0\.0\.1:\d+: .*; version 4 of profile shared of user alice was not saved, the last good version stays/);
  assert.equal(row().version, 3, 'the last good version stays');
  assert.equal(row().heldPid, 0, 'the hold is released');
  // an open from the other replica: a clear error, nothing held
  const other = sessions[winner].client;
  r = await openProfile(other);
  assert.equal(r.isError, true, dump(r));
  assert.match(textOf(r), /cannot reach the object store s3:\/\/profiles\/ at http:\/\/127\.0\.0\.1:\d+/);
  assert.equal(row().heldPid, 0, 'not held');
  // both sessions still serve
  for (const c of [holder, other]) await ok(c, 'browser_navigate', { url: url('/profile/login.html') });
});
