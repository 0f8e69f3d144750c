/*
 * No orphan ever: `glassbox serve` killed with -9 while a session's
 * browser is still launching leaves a record of that browser (written
 * before it was spawned), so that the next start ends it; and while it
 * runs unreaped, the /healthz of another serve on the same data dir
 * counts it in residual_processes. After two restarts no Chromium of the
 * data dir is left.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, startFixtureServer, chromiumPids, pollUntil, runEntries } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';

let fixture;
const services = [];

after(async () => {
  for (const s of services) {
    await s.stop('SIGKILL').catch(() => {});
    s.killLeftovers();
  }
  services[0]?.removeDataDir();
  await fixture?.close();
});

const sessionDirs = (dataDir) => runEntries(path.join(dataDir, 'run')).filter((e) => /^[0-9a-f]{32}$/.test(e));

async function healthz(svc) {
  const r = await svc.admin('GET', '/healthz');
  assert.equal(r.status, 200, r.text);
  return r.json;
}

test('serve killed while a browser launches: counted while orphaned, reaped by the next start', async () => {
  fixture = await startFixtureServer();
  // the one that stays up, on the same data dir
  const keeper = await startServe({ tenants: { a: {} }, admin: true });
  services.push(keeper);
  const dataDir = keeper.dataDir;
  assert.equal((await healthz(keeper)).residual_processes, 0, 'nothing left over at first');

  const victim = await startServe({ tenants: { a: {} }, dataDir });
  services.push(victim);
  const before = new Set(sessionDirs(dataDir));
  // a session's browser starts launching when it is created (prelaunch) or
  // at its first call
  victim.connect('a').then(({ client }) => client.callTool({ name: 'browser_navigate', arguments: { url: `${fixture.url}/form.html` } })).catch(() => {});
  // the moment its browser exists, before its session is ready
  const launching = await pollUntil(() => {
    const dir = sessionDirs(dataDir).find((d) => !before.has(d));
    return dir && chromiumPids(path.join(dataDir, 'run', dir)).length > 0 ? dir : null;
  }, { intervalMs: 2, deadlineMs: 30000 });
  assert.ok(launching, `a browser started launching: ${sessionDirs(dataDir)} ${victim.stderr().slice(-3000)}`);
  victim.proc.kill('SIGKILL');
  await victim.exited;
  const orphanDir = path.join(dataDir, 'run', launching);
  const orphans = chromiumPids(orphanDir);
  assert.ok(orphans.length > 0, 'its browser outlived it');
  assert.ok(fs.existsSync(path.join(orphanDir, 'owner')), 'it was recorded, owner file and all');

  // while nobody has reaped it, the other service counts it (its count
  // of unowned browsers is at most a second old)
  let hz;
  await pollUntil(async () => (hz = await healthz(keeper)).residual_processes >= 1, { deadlineMs: 10000 });
  assert.ok(hz.residual_processes >= 1, `residual_processes counts the orphan: ${JSON.stringify(hz)}`);

  // restart twice on the data dir: the first start reaps it
  await keeper.stop();
  for (let i = 0; i < 2; i++) {
    const next = await startServe({ tenants: { a: {} }, admin: true, dataDir });
    services.push(next);
    assert.ok(await pollUntil(() => chromiumPids(dataDir).length === 0), `Chromium left after start ${i + 1}: ${chromiumPids(dataDir)}`);
    assert.equal((await healthz(next)).residual_processes, 0);
    if (i === 0) assert.match(next.stderr(), /removed what a previous glassbox left: [1-9]\d* browser\(s\) ended/);
    await next.stop();
  }
  assert.deepEqual(chromiumPids(dataDir), [], 'zero Chromium left');
  assert.ok(!fs.existsSync(orphanDir), 'the orphan\'s run dir is removed');
});
