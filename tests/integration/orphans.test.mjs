/*
 * After a crash: when glassbox is killed with -9, its browser (its own
 * process group) and private run dir stay behind. The next glassbox on the
 * same data dir ends that browser and removes that dir at start, while a
 * second glassbox still running on the same data dir keeps its browser.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import {
  assert, startFixtureServer, openGlassbox, newDataDir, ok, sc, chromiumPids, pollUntil,
  runEntries, closeGently, pidAlive as alive,
} from '../e2e/lib.mjs';

let fixture;
const opened = [];
const dataDir = newDataDir('glassbox-orphans-');

after(async () => {
  for (const gb of opened) await gb.close().catch(() => {});
  await fixture?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/* The session dirs under run/ owned by the glassbox with that pid. */
function dirsOwnedBy(pid) {
  const run = path.join(dataDir, 'run');
  return fs.readdirSync(run).filter((d) => {
    try {
      return new RegExp(`^pid ${pid}$`, 'm').test(fs.readFileSync(path.join(run, d, 'owner'), 'utf8'));
    } catch {
      return false;
    }
  }).map((d) => path.join(run, d));
}

test('the next start removes what a killed glassbox left, not what a live one uses', async () => {
  fixture = await startFixtureServer();
  const dead = await openGlassbox({ dataDir });
  opened.push(dead);
  await ok(dead.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  const live = await openGlassbox({ dataDir });
  opened.push(live);
  await ok(live.client, 'browser_navigate', { url: `${fixture.url}/form.html` });

  const [deadDir] = dirsOwnedBy(dead.pid);
  const [liveDir] = dirsOwnedBy(live.pid);
  assert.ok(deadDir && liveDir, 'each glassbox has its own session dir with an owner file');
  const deadBrowser = chromiumPids(deadDir);
  const liveBrowser = chromiumPids(liveDir);
  assert.ok(deadBrowser.length > 0 && liveBrowser.length > 0, 'both browsers run');

  process.kill(dead.pid, 'SIGKILL');
  assert.ok(await pollUntil(() => !alive(dead.pid)), 'the first glassbox is gone');
  await new Promise((r) => setTimeout(r, 300));
  assert.ok(deadBrowser.some(alive), 'its browser outlived it (the orphan to clean up)');
  assert.ok(fs.existsSync(deadDir), 'and so did its run dir');

  const next = await openGlassbox({ dataDir });
  opened.push(next);
  const gone = await pollUntil(() => chromiumPids(deadDir).length === 0 && !deadBrowser.some(alive));
  assert.ok(gone, `orphaned Chromium processes left: ${chromiumPids(deadDir).join(', ')}`);
  assert.ok(!fs.existsSync(deadDir), 'the orphaned run dir is removed');
  assert.match(next.stderr(), /removed what a previous glassbox left: 1 browser\(s\) ended, 1 dir\(s\) removed/);

  // the live glassbox kept its browser and goes on with it
  assert.ok(fs.existsSync(liveDir), 'the live glassbox keeps its dir');
  const livePgid = Number(/^pgid (\d+)$/m.exec(fs.readFileSync(path.join(liveDir, 'owner'), 'utf8'))[1]);
  assert.ok(liveBrowser.includes(livePgid) && alive(livePgid), 'and its browser');
  const r = await ok(live.client, 'browser_navigate', { url: `${fixture.url}/second.html` });
  assert.equal(sc(r).title, 'Second page');
  await ok(next.client, 'browser_navigate', { url: `${fixture.url}/form.html` });

  await closeGently(live);
  await closeGently(next);
  assert.ok(await pollUntil(() => chromiumPids(dataDir).length === 0), 'nothing left at the end');
  const run = path.join(dataDir, 'run');
  const left = () => runEntries(run);
  await pollUntil(() => left().length === 0); // glassbox may still be finishing its exit
  assert.deepEqual(left(), []);
});
