/*
 * Zero residue: once the client closes, no Chromium process of this data
 * dir is left and the data dir's run/ is empty, while the evidence stays.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, startFixtureServer, openGlassbox, ok, snapshot, findRef, chromiumPids, pollUntil, listFiles,
} from '../e2e/lib.mjs';

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
  assert.ok(fs.readdirSync(runDir).length > 0, 'the session has its dir under run/');

  const serverPid = gb.pid;
  assert.ok(serverPid > 0);
  await gb.close();

  const noChromium = await pollUntil(() => chromiumPids(dataDir).length === 0);
  assert.ok(noChromium, `Chromium processes left: ${chromiumPids(dataDir).join(', ')}`);
  const left = fs.existsSync(runDir) ? fs.readdirSync(runDir) : [];
  assert.deepEqual(left, [], 'run/ is empty');
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
