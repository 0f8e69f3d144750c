/*
 * After a crash in isolation "context": when glassbox is killed with -9,
 * its tenant's shared browser (its own process group, its run dir) and the
 * run dir of each session in it stay behind. The next glassbox on the same
 * data dir ends that browser and removes those dirs at start.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, startFixtureServer, openGlassbox, newDataDir, ok, sc, chromiumPids, pollUntil, runEntries, REPO_ROOT, pidAlive as alive } from '../e2e/lib.mjs';

let fixture;
const opened = [];
const dataDir = newDataDir('glassbox-ctx-orphans-');
const config = path.join(dataDir, '..', `${path.basename(dataDir)}-policy.json`);

after(async () => {
  for (const gb of opened) await gb.close().catch(() => {});
  await fixture?.close();
  fs.rmSync(dataDir, { recursive: true, force: true });
  fs.rmSync(config, { force: true });
});

test('the next start ends a killed glassbox\'s shared browser and removes its sessions\' dirs', async () => {
  fixture = await startFixtureServer();
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
  fs.writeFileSync(config, JSON.stringify({ ...policy, isolation: 'context' }));
  const dead = await openGlassbox({ dataDir, config });
  opened.push(dead);
  const r = await ok(dead.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  assert.equal(sc(r).browser, 'shared', 'the session is a context of a shared browser');
  const run = path.join(dataDir, 'run');
  const dirs = runEntries(run).filter((d) => fs.statSync(path.join(run, d)).isDirectory());
  assert.equal(dirs.length, 2, `the shared browser's dir and the session's: ${dirs}`);
  const browsers = chromiumPids(dataDir);
  assert.ok(browsers.length > 0, 'the shared browser runs');

  process.kill(dead.pid, 'SIGKILL');
  assert.ok(await pollUntil(() => !alive(dead.pid)), 'glassbox is gone');
  await new Promise((res) => setTimeout(res, 300));
  assert.ok(browsers.some(alive), 'its shared browser outlived it (the orphan to clean up)');

  const next = await openGlassbox({ dataDir });
  opened.push(next);
  const gone = await pollUntil(() => !browsers.some(alive) && dirs.every((d) => !fs.existsSync(path.join(run, d))), { deadlineMs: 60000 });
  assert.ok(gone, `left: browsers ${browsers.filter(alive)}, dirs ${dirs.filter((d) => fs.existsSync(path.join(run, d)))}`);
  assert.match(next.stderr(), /removed what a previous glassbox left: 1 browser\(s\) ended, 2 dir\(s\) removed/);
});
