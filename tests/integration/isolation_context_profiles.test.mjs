/*
 * Profiles in isolation "context", with real Chromium, the official MCP
 * SDK client over glassbox serve, and the cookie login of the fixture
 * site: a profile opened by a context-mode session is its browser
 * context's storage state (cookies, session cookies too, and each
 * origin's localStorage), sealed by the profile store. Sign in, close
 * (sealed); a new session on the profile is signed in, in a context of
 * the tenant's one shared browser, while another session of the same
 * tenant without the profile is not; the one-writer hold refuses a second
 * writer; a tampered sealed state is refused; a session with a browser of
 * its own refuses the storage-state profile, and a context-mode session
 * refuses a browser profile. No cookie value is written in clear.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assert, startFixtureServer, ok, callTool, sc, dump, textOf, evaluate, openGlassbox, glassboxBin, listFiles, filesContaining, REPO_ROOT } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';

const LOOPBACK = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
const CONTEXT = { ...LOOPBACK, isolation: 'context' };

let fixture;
let svc;
const mcps = [];

const url = (p) => fixture.url + p;
const errorCode = (r) => sc(r)?.error?.code;
const openProfile = (client, args) => callTool(client, 'browser_session', { action: 'open', user: 'alice', ...args });

function cli(args) {
  return spawnSync(glassboxBin(), args, { env: { ...process.env, GLASSBOX_DATA_DIR: svc.dataDir }, encoding: 'utf8' });
}

/* Ends a serve session (DELETE) and its client. */
async function end(session) {
  await session.transport.terminateSession().catch(() => {});
  await session.client.close();
}

function blobsOf(tenant) {
  return listFiles(path.join(svc.dataDir, 'tenants', tenant, 'profiles')).filter((f) => f.endsWith('.sealed'));
}

/* The browser (main) processes of the service (no --type=). */
function browserMains() {
  return svc.chromiums().filter((pid) => {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      return /^chrom(e|ium)$/.test(path.basename(args[0])) && !args.some((a) => a.startsWith('--type='));
    } catch {
      return false;
    }
  });
}

async function login(client) {
  await ok(client, 'browser_navigate', { url: url('/profile/login.html') });
  await ok(client, 'browser_type', { target: 'input[name=user]', text: 'alice' });
  await ok(client, 'browser_type', { target: 'input[name=password]', text: 'correct horse' });
  const r = await ok(client, 'browser_click', { target: 'button[type=submit]' });
  assert.equal(sc(r).title, 'Account', dump(r));
}

/* The account page as the session's browser sees it: {title, text}. */
async function account(client) {
  const r = await ok(client, 'browser_navigate', { url: url('/profile/account') });
  const text = await evaluate(client, '() => document.body.innerText');
  return { title: sc(r).title, text };
}

before(async () => {
  fixture = await startFixtureServer();
  svc = await startServe({ tenants: { alpha: { policy: CONTEXT, max_sessions: 4 } }, limits: { idle_ttl_s: 120 } });
});

after(async () => {
  for (const m of mcps) await m.close();
  if (svc) {
    const r = await svc.stop('SIGTERM');
    assert.equal(r.code, 0, `glassbox serve exited with ${JSON.stringify(r)}:\n${svc.stderr().slice(-3000)}`);
    assert.deepEqual(svc.chromiums(), [], 'no Chromium may be left after the stop');
    svc.removeDataDir();
  }
  if (fixture) await fixture.close();
});

test('sign in on a new profile in context mode and close it: sealed as version 1, no secret in clear', async () => {
  const a = await svc.connect('alpha');
  let r = await openProfile(a.client, { profile: 'ctx', create: true });
  assert.deepEqual(sc(r).profile, { name: 'ctx', user: 'alice', version: 0, readonly: false }, dump(r));
  await login(a.client);
  const page = await account(a.client);
  assert.match(page.text, /Session cookie: present/);
  // a second session of the tenant joins the same Chromium
  const peer = await svc.connect('alpha');
  await ok(peer.client, 'browser_navigate', { url: url('/form.html') });
  assert.equal(browserMains().length, 1, `one Chromium for the session on the profile and its peer: ${browserMains()}`);
  await end(peer);
  r = await ok(a.client, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.saved, true, dump(r));
  assert.equal(sc(r).profile_closed.version, 1, dump(r));
  await end(a);

  assert.equal(blobsOf('alpha').length, 1, 'one sealed version on disk');
  const secrets = fixture.profileSecrets();
  assert.ok(secrets.length >= 3, `the site handed out a login, a session cookie and a note: ${secrets}`);
  for (const s of secrets) {
    assert.deepEqual(filesContaining(svc.dataDir, s), [], `${s} is nowhere in clear under the data dir`);
    assert.ok(!svc.stderr().includes(s), `${s} is not in the service's log`);
  }
});

test('a new session on the profile is signed in, another session of the tenant without it is not', async () => {
  const b = await svc.connect('alpha');
  const other = await svc.connect('alpha');
  try {
    const r = await openProfile(b.client, { profile: 'ctx' });
    assert.equal(sc(r).profile.version, 1, dump(r));
    const page = await account(b.client);
    assert.equal(page.title, 'Account', page.text);
    assert.match(page.text, /Signed in as alice/);
    assert.match(page.text, /Session cookie: present/, 'the session cookie came back with the context');
    const note = await evaluate(b.client, "() => localStorage.getItem('gb_note')");
    assert.ok(fixture.profileSecrets().includes(note), `the localStorage note the site stored first: ${note}`);

    const plain = await account(other.client);
    assert.equal(plain.title, 'Sign in required', plain.text);
    assert.equal(await evaluate(other.client, "() => localStorage.getItem('gb_note')"), null, 'no note of the profile');
    assert.equal(browserMains().length, 1, `both in the tenant's one Chromium: ${browserMains()}`);

    // one writer: a third session of the tenant is refused the profile
    const third = await svc.connect('alpha');
    const busy = await openProfile(third.client, { profile: 'ctx' });
    assert.equal(errorCode(busy), 'profile_busy', dump(busy));
    assert.match(textOf(busy), /in use by session/);
    await end(third);

    const closed = await ok(b.client, 'browser_session', { action: 'close' });
    assert.equal(sc(closed).profile_closed.version, 2, dump(closed));
  } finally {
    await end(b);
    await end(other);
  }
});

test('a tampered sealed state is refused and the profile stays as it was', async () => {
  const [blob] = blobsOf('alpha');
  const good = fs.readFileSync(blob);
  const flipped = Buffer.from(good);
  flipped[Math.floor(flipped.length / 2)] ^= 0x40;
  fs.writeFileSync(blob, flipped);
  const c = await svc.connect('alpha');
  try {
    let r = await openProfile(c.client, { profile: 'ctx' });
    assert.equal(errorCode(r), 'profile_damaged', dump(r));
    assert.match(textOf(r), /version 2 of profile ctx of user alice does not open/);
    fs.writeFileSync(blob, good);
    r = await openProfile(c.client, { profile: 'ctx' });
    assert.equal(sc(r).profile.version, 2, dump(r));
    assert.match((await account(c.client)).text, /Signed in as alice/);
    await ok(c.client, 'browser_session', { action: 'close', save: false });
  } finally {
    await end(c);
  }
});

test('each mode refuses the other kind of profile with what to do', async () => {
  // the same tenant with a browser per session (the default isolation)
  const proc = await openGlassbox({ dataDir: svc.dataDir, env: { GLASSBOX_TENANT: 'alpha' } });
  mcps.push(proc);
  let r = await openProfile(proc.client, { profile: 'ctx' });
  assert.equal(r.isError, true, dump(r));
  assert.match(textOf(r), /profile ctx keeps a browser context's storage state .*"isolation": "context"/);
  // a browser profile saved there is refused in context mode
  r = await openProfile(proc.client, { profile: 'own', create: true });
  assert.equal(sc(r).profile.version, 0, dump(r));
  await ok(proc.client, 'browser_navigate', { url: url('/form.html') });
  r = await ok(proc.client, 'browser_session', { action: 'close' });
  assert.equal(sc(r).profile_closed.saved, true, dump(r));
  const c = await svc.connect('alpha');
  try {
    r = await openProfile(c.client, { profile: 'own' });
    assert.equal(r.isError, true, dump(r));
    assert.match(textOf(r), /profile own is a browser profile .*"isolation": "process"/);
    // the refused open held nothing: the profile opens again where it fits
    const show = JSON.parse(cli(['profile', 'show', 'own', '--tenant', 'alpha', '--user', 'alice']).stdout);
    assert.equal(show.held_by, null, JSON.stringify(show));
  } finally {
    await end(c);
  }
});

test('export reads the storage state without a browser (Playwright format)', async () => {
  const out = path.join(svc.dataDir, 'ctx-state.json');
  const r = cli(['profile', 'export', 'ctx', '--tenant', 'alpha', '--user', 'alice', '-o', out]);
  assert.equal(r.status, 0, r.stderr);
  const state = JSON.parse(fs.readFileSync(out, 'utf8'));
  assert.ok(state.cookies.some((c) => c.name === 'gb_login' && c.httpOnly), JSON.stringify(state.cookies.map((c) => c.name)));
  assert.ok(state.cookies.some((c) => c.name === 'gb_tab' && c.expires === -1), 'the session cookie, as Playwright writes one');
  assert.ok(state.origins.some((o) => o.origin === fixture.url && o.localStorage.some((i) => i.name === 'gb_note')), JSON.stringify(state.origins.map((o) => o.origin)));
  fs.rmSync(out);
});
