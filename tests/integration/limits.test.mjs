/*
 * Per-browser limits: a page that eats memory or spins the CPU gets its
 * session's browser closed with an error naming the limit, while another
 * glassbox session on the same machine keeps working; the next call of
 * the limited session starts a new browser; nothing is left behind.
 * The limits come from the tenant policy ("limits", docs/limits.md).
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert, startFixtureServer, openGlassbox, ok, callTool, sc, textOf, chromiumPids, pollUntil, REPO_ROOT,
  runEntries, closeGently,
} from '../e2e/lib.mjs';

let fixture;
const opened = [];
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-limits-'));

/* A policy file: the loopback test policy plus limits. */
function policyWith(limits) {
  const base = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
  const file = path.join(tmp, `policy-${opened.length}-${Date.now()}.json`);
  fs.writeFileSync(file, JSON.stringify({ ...base, limits }));
  return file;
}

async function open(limits) {
  const gb = await openGlassbox(limits ? { config: policyWith(limits) } : {});
  opened.push(gb);
  return gb;
}

before(async () => {
  fixture = await startFixtureServer();
});

after(async () => {
  for (const gb of opened) {
    await gb.close();
    gb.removeDataDir();
  }
  await fixture?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

/* Runs calls on the hog session until one fails; returns that result. */
async function firstFailure(client, calls) {
  for (const [name, args] of calls) {
    const r = await callTool(client, name, args);
    if (r.isError) return r;
  }
  return null;
}

async function expectNoChromium(...gbs) {
  for (const gb of gbs) {
    await closeGently(gb);
    const gone = await pollUntil(() => chromiumPids(gb.dataDir).length === 0);
    assert.ok(gone, `Chromium processes left: ${chromiumPids(gb.dataDir).join(', ')}`);
    // glassbox may still be finishing its exit (its admin socket lives in run/ too)
    const run = path.join(gb.dataDir, 'run');
    const left = () => runEntries(run);
    await pollUntil(() => left().length === 0);
    assert.deepEqual(left(), [], 'run/ is empty');
  }
}

test('a page that eats memory hits its session\'s limit; another session carries on', async () => {
  const hog = await open({ browser_memory_mb: 400 });
  const other = await open(null);
  await ok(other.client, 'browser_navigate', { url: `${fixture.url}/form.html` });

  const failed = await firstFailure(hog.client, [
    ['browser_navigate', { url: `${fixture.url}/hog-memory.html` }],
    ['browser_wait_for', { text: 'this text never appears', time: 25 }],
  ]);
  assert.ok(failed, 'the memory hog was stopped');
  assert.equal(sc(failed).error.code, 'limit_exceeded', textOf(failed));
  assert.match(sc(failed).error.message,
    /the browser used \d+ MiB, over this session's limit of 400 MiB; it was closed/);
  assert.match(textOf(failed), /the next call starts a new browser/);
  // Chromium's sandboxed processes (in PID namespaces of their own) end just after their zygote
  assert.ok(await pollUntil(() => chromiumPids(hog.dataDir).length === 0),
    `the hog's browser is gone: ${chromiumPids(hog.dataDir).join(', ')} left`);

  // the other session never noticed
  const r = await ok(other.client, 'browser_snapshot', {});
  assert.match(textOf(r), /Save/);
  assert.ok(chromiumPids(other.dataDir).length > 0, 'the other browser still runs');

  // the hog's next call starts a new browser, still under the limit
  const again = await ok(hog.client, 'browser_navigate', { url: `${fixture.url}/second.html` });
  assert.equal(sc(again).title, 'Second page');
  await expectNoChromium(hog, other);
});

test('a page that spins the CPU hits its session\'s limit', async () => {
  const hog = await open({ browser_cpu_percent: 5, browser_cpu_window_s: 3 });
  const other = await open(null);
  await ok(other.client, 'browser_navigate', { url: `${fixture.url}/form.html` });

  const failed = await firstFailure(hog.client, [
    ['browser_navigate', { url: `${fixture.url}/hog-cpu.html` }],
    ['browser_wait_for', { text: 'this text never appears', time: 25 }],
  ]);
  assert.ok(failed, 'the CPU hog was stopped');
  assert.equal(sc(failed).error.code, 'limit_exceeded', textOf(failed));
  assert.match(sc(failed).error.message,
    /the browser used \d+% of a CPU core for 3 s, over this session's limit of 5%; it was closed/);

  const r = await ok(other.client, 'browser_navigate', { url: `${fixture.url}/second.html` });
  assert.equal(sc(r).title, 'Second page');
  await expectNoChromium(hog, other);
});

test('a bad limits object is refused with what to fix', async () => {
  const gb = await open({ browser_memory_mb: 'lots' });
  const r = await callTool(gb.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  assert.ok(r.isError, 'the call failed');
  assert.match(textOf(r), /policy\.limits\.browser_memory_mb must be a whole number from 64 to/);
});
