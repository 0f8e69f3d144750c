/*
 * Zero residue: once the client closes, no Chromium process of this data
 * dir is left and the data dir's run/ is empty, while the evidence stays.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, startFixtureServer, openGlassbox, ok, snapshot, findRef, chromiumPids, pollUntil, listFiles,
  runEntries,
} from '../e2e/lib.mjs';

/* The homes of the browser users of dataDir's sessions (/tmp/gb-browsers). */
function browserHomes(dataDir) {
  let tag = '';
  try { tag = fs.readFileSync(path.join(dataDir, 'run', '.browsers-tag'), 'latin1').trim(); } catch { return []; }
  const base = '/tmp/gb-browsers';
  return fs.existsSync(base) ? fs.readdirSync(base).filter((n) => n.startsWith(`${tag}-`)).map((n) => path.join(base, n)) : [];
}

let fixture;
let gb;

after(async () => {
  await gb?.close();
  gb?.removeDataDir();
  await fixture?.close();
});

test('after the client closes, nothing of the browser is left', async () => {
  fixture = await startFixtureServer();
  gb = await openGlassbox();
  const { client, dataDir } = gb;
  await ok(client, 'browser_navigate', { url: `${fixture.url}/popup.html` });
  await ok(client, 'browser_click', { target: findRef(await snapshot(client), 'button', 'Open popup') });
  await ok(client, 'browser_take_screenshot', {});
  assert.ok(chromiumPids(dataDir).length > 0, 'a browser ran under the data dir');
  const runDir = path.join(dataDir, 'run');
  assert.ok(fs.existsSync(runDir), 'run/ exists while a session runs');
  assert.ok(runEntries(runDir).length > 0, 'the session has its dir under run/');
  const homes = browserHomes(dataDir);
  if (process.geteuid() === 0) assert.equal(homes.length, 1, 'as root, the browser runs as a user of its own with a home');

  const serverPid = gb.pid;
  assert.ok(serverPid > 0);
  await gb.close();

  const noChromium = await pollUntil(() => chromiumPids(dataDir).length === 0);
  assert.ok(noChromium, `Chromium processes left: ${chromiumPids(dataDir).join(', ')}`);
  const left = runEntries(runDir);
  assert.deepEqual(left, [], 'run/ is empty');
  for (const home of homes) assert.ok(!fs.existsSync(home), `${home} is removed`);
  const serverGone = await pollUntil(() => {
    try {
      process.kill(serverPid, 0);
      return false;
    } catch {
      return true;
    }
  });
  assert.ok(serverGone, 'the glassbox process is gone');
  // Evidence outlives the session.
  const artifacts = listFiles(dataDir).filter((f) => /\/artifacts\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(f));
  assert.ok(artifacts.length > 0, 'the evidence screenshots are kept');
  gb.removeDataDir();
  gb = null;
});

test('browser_close ends the browser but not the server', async () => {
  gb = await openGlassbox();
  const { client, dataDir } = gb;
  await ok(client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  assert.ok(chromiumPids(dataDir).length > 0);
  await ok(client, 'browser_close', {});
  const noChromium = await pollUntil(() => chromiumPids(dataDir).length === 0);
  assert.ok(noChromium, `Chromium processes left after browser_close: ${chromiumPids(dataDir).join(', ')}`);
  // The next call starts a browser again.
  const r = await ok(client, 'browser_navigate', { url: `${fixture.url}/second.html` });
  assert.equal(r.structuredContent.title, 'Second page');
  await gb.close();
  assert.ok(await pollUntil(() => chromiumPids(dataDir).length === 0));
  gb.removeDataDir();
});
