/*
 * Who the browser runs as: run as root, glassbox starts each session's
 * Chromium as a user of its own (a fresh uid), with Chromium's sandbox on,
 * so that its renderers run in namespaces of their own; a browser cannot
 * read another's profile or glassbox's data dir. Run as another user,
 * Chromium runs as that user, sandboxed too.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import {
  assert, startFixtureServer, openGlassbox, ok, chromiumPids, profileDirs,
} from '../e2e/lib.mjs';

let fixture;
const opened = [];
after(async () => {
  for (const gb of opened) {
    await gb.close().catch(() => {});
    gb.removeDataDir();
  }
  await fixture?.close();
});

/* The real uid of pid, from /proc. */
function uidOf(pid) {
  const m = /^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'));
  return Number(m[1]);
}

const nsOf = (pid, kind) => fs.readlinkSync(`/proc/${pid}/ns/${kind}`);
const cmdlineOf = (pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');

test('each browser runs as a user of its own, with Chromium\'s sandbox on', async () => {
  fixture = await startFixtureServer();
  const a = await openGlassbox();
  const b = await openGlassbox();
  opened.push(a, b);
  await ok(a.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  await ok(b.client, 'browser_navigate', { url: `${fixture.url}/form.html` });

  const uids = [];
  for (const gb of [a, b]) {
    const pids = chromiumPids(gb.dataDir);
    assert.ok(pids.length > 1, 'the browser and its helpers run');
    const users = new Set(pids.map(uidOf));
    assert.equal(users.size, 1, `one user for a browser's processes: ${[...users]}`);
    const [uid] = users;
    uids.push(uid);
    for (const pid of pids) assert.ok(!cmdlineOf(pid).includes('--no-sandbox'), `process ${pid} runs sandboxed`);
    if (process.geteuid() !== 0) {
      assert.equal(uid, process.geteuid(), 'not root: Chromium runs as glassbox\'s user');
      continue;
    }
    assert.ok(uid >= 1900000000, `as root, not root: uid ${uid}`);
    // the sandbox at work: some of its processes live in user namespaces of their own
    const leader = pids.find((p) => !cmdlineOf(p).some((arg) => arg.startsWith('--type=')));
    assert.ok(leader, 'the browser process itself');
    assert.ok(pids.some((p) => nsOf(p, 'user') !== nsOf(leader, 'user')), `sandboxed processes in user namespaces of their own: ${pids.map((p) => nsOf(p, 'user') + ' ' + cmdlineOf(p).slice(0, 2).join(' ')).join('; ')}`);
    // its profile is its own and no one else's to read
    const [profile] = profileDirs(gb.dataDir);
    const st = fs.statSync(profile);
    assert.equal(st.uid, uid);
    assert.equal(st.mode & 0o077, 0, 'the profile is private to its user');
    // glassbox's own data dir stays closed to it
    assert.equal(fs.statSync(gb.dataDir).mode & 0o007, 0, 'others get nothing of the data dir');
  }
  if (process.geteuid() === 0) assert.notEqual(uids[0], uids[1], 'two sessions, two users');
});
