/*
 * Playwright MCP's launch and context options, with real Chromium and the
 * MCP SDK client: --no-sandbox (and a config's
 * browser.launchOptions.chromiumSandbox false) turns Chromium's own
 * sandbox off while glassbox's uid, network namespace and egress proxy
 * stay on, said once on stderr; contextOptions.permissions grants as
 * --grant-permissions does and contextOptions.geolocation is emulated on
 * every page as browser_emulate's geolocation is; every other key of launchOptions and
 * contextOptions is refused at start, the key named with the reason.
 */
import { test, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert, openGlassbox, startFixtureServer, glassboxBin, newDataDir, REPO_ROOT, ok, evaluate,
  chromiumPids, dump,
} from '../e2e/lib.mjs';

const POLICY = path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json');
const NOTE = "Chromium's sandbox is off (--no-sandbox); glassbox's namespace, uid and egress proxy stay on";
let fixture;
const opened = [];
const dirs = [];

after(async () => {
  for (const gb of opened) {
    await gb.close().catch(() => {});
    gb.removeDataDir();
  }
  await fixture?.close();
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

// Chromium's helpers rewrite their title: one string, arguments joined by spaces
const cmdlineOf = (pid) => fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split(/[\0 ]/);
const uidOf = (pid) => Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'latin1'))[1]);
const netnsOf = (pid) => fs.readlinkSync(`/proc/${pid}/ns/net`);

/* A Playwright MCP config file with cfg, in a dir of its own. */
function configFile(cfg) {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-pwcfg-'));
  dirs.push(d);
  const f = path.join(d, 'config.json');
  fs.writeFileSync(f, JSON.stringify(cfg));
  return f;
}

/* Starts glassbox with extra server flags (GLASSBOX_CONFIG stays the policy). */
async function start(args) {
  fixture ??= await startFixtureServer();
  const saved = process.env.GLASSBOX_ARGS;
  process.env.GLASSBOX_ARGS = args.join(' ');
  try {
    const gb = await openGlassbox({ config: POLICY });
    opened.push(gb);
    return gb;
  } finally {
    if (saved === undefined) delete process.env.GLASSBOX_ARGS;
    else process.env.GLASSBOX_ARGS = saved;
  }
}

/* What a browser launched with Chromium's sandbox off must still have:
 * --no-sandbox on every process, the note once on stderr, and each layer
 * the note says stays on, checked on the processes themselves. */
async function assertSandboxOffBoundaryOn(gb) {
  await ok(gb.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  const pids = chromiumPids(gb.dataDir);
  assert.ok(pids.length > 1, 'the browser and its helpers run');
  // the browser and every process it starts (renderers, zygotes, utilities), not the crash reporter
  const chromium = pids.filter((p) => !/crashpad/.test(cmdlineOf(p)[0]));
  assert.ok(chromium.some((p) => cmdlineOf(p).includes('--type=renderer')), 'a renderer runs');
  for (const pid of chromium) assert.ok(cmdlineOf(pid).includes('--no-sandbox'), `process ${pid}: ${cmdlineOf(pid).join(' ')}`);
  const said = gb.stderr().split('\n').filter((l) => l.includes("Chromium's sandbox is off"));
  assert.equal(said.length, 1, `said once: ${gb.stderr()}`);
  const full = said[0].includes(NOTE);
  if (full || /and its uid/.test(said[0])) {
    const uids = new Set(pids.map(uidOf));
    assert.equal(uids.size, 1);
    if (process.geteuid() === 0) assert.ok([...uids][0] >= 1900000000, `as root, a user of its own: ${[...uids]}`);
    else assert.equal([...uids][0], process.geteuid());
  }
  if (full || /and its network namespace/.test(said[0]))
    for (const pid of pids) assert.notEqual(netnsOf(pid), netnsOf(process.pid), `process ${pid} is in a network namespace of its own`);
  // the egress proxy still answers for the browser: a denied host is refused
  const probe = `/egress/ok/nosandbox-${process.hrtime.bigint()}.txt`;
  const denied = await evaluate(gb.client, `async () => { try { await fetch('http://evil.test:${fixture.port}${probe}'); return 'reached'; } catch (e) { return 'refused'; } }`);
  assert.equal(denied, 'refused');
  assert.equal(fixture.hits().paths[probe], undefined, 'the denied host received nothing');
}

test('--no-sandbox turns Chromium\'s sandbox off; glassbox\'s uid, namespace and proxy stay on, said once', async () => {
  const gb = await start(['--no-sandbox']);
  await assertSandboxOffBoundaryOn(gb);
});

test('a config\'s chromiumSandbox false does the same; contextOptions.permissions grants and geolocation is emulated', async () => {
  const cfg = configFile({ browser: { launchOptions: { chromiumSandbox: false, headless: true }, contextOptions: { permissions: ['geolocation'], geolocation: { latitude: 51.5, longitude: -0.125, accuracy: 7 } } } });
  const gb = await start([`--config=${cfg}`]);
  await assertSandboxOffBoundaryOn(gb);
  const state = await evaluate(gb.client, `async () => (await navigator.permissions.query({ name: 'geolocation' })).state`);
  assert.equal(state, 'granted');
  const where = await evaluate(gb.client, `() => new Promise((ok, no) => navigator.geolocation.getCurrentPosition((p) => ok([p.coords.latitude, p.coords.longitude, p.coords.accuracy]), (e) => no(new Error(e.message)), { timeout: 20000 }))`);
  assert.deepEqual(where, [51.5, -0.125, 7]);
  // a new tab gets it too, from its first script
  await ok(gb.client, 'browser_tabs', { action: 'new', url: `${fixture.url}/form.html` });
  const there = await evaluate(gb.client, `() => new Promise((ok, no) => navigator.geolocation.getCurrentPosition((p) => ok(p.coords.latitude), (e) => no(new Error(e.message)), { timeout: 20000 }))`);
  assert.equal(there, 51.5);
});

test('without --no-sandbox nothing is said and the browser keeps its sandbox', async () => {
  const gb = await start([]);
  await ok(gb.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  assert.doesNotMatch(gb.stderr(), /sandbox is off/);
  const cfg = configFile({ browser: { launchOptions: { chromiumSandbox: true } } });
  const gb2 = await start([`--config=${cfg}`]);
  await ok(gb2.client, 'browser_navigate', { url: `${fixture.url}/form.html` });
  assert.doesNotMatch(gb2.stderr(), /sandbox is off/);
  for (const g of [gb, gb2]) {
    const pids = chromiumPids(g.dataDir);
    assert.ok(pids.length > 1);
    // as root the sandbox needs user namespaces; where there are none it is off and says why elsewhere
    if (process.geteuid() !== 0 || pids.some((p) => uidOf(p) !== 0))
      for (const pid of pids) assert.ok(!cmdlineOf(pid).includes('--no-sandbox'), `process ${pid} runs sandboxed`);
  }
});

test('launchOptions and contextOptions keys glassbox does not honour are refused at start, named with the reason', () => {
  const data = newDataDir();
  dirs.push(data);
  for (const [cfg, why] of [
    [{ launchOptions: { args: ['--disable-web-security'] } }, /"browser\.launchOptions\.args" is not honoured: glassbox sets Chromium's flags itself/],
    [{ launchOptions: { executablePath: '/bin/true' } }, /"browser\.launchOptions\.executablePath" is not honoured: name the browser with --chromium/],
    [{ launchOptions: { proxy: { server: 'http://p:1' } } }, /"browser\.launchOptions\.proxy" is not honoured: the browser reaches the network only through glassbox's egress proxy/],
    [{ launchOptions: { headless: 'yes' } }, /"browser\.launchOptions\.headless" is not honoured: it is true or false/],
    [{ launchOptions: { chromiumSandbox: 0 } }, /"browser\.launchOptions\.chromiumSandbox" is not honoured: it is true or false/],
    [{ launchOptions: { channel: 'msedge' } }, /"browser\.launchOptions\.channel" is not honoured: glassbox drives Chromium only/],
    [{ launchOptions: { slowMo: 100 } }, /"browser\.launchOptions\.slowMo" is not honoured: glassbox launches and isolates its own Chromium; of "browser" it takes .*chromiumSandbox/],
    [{ contextOptions: { locale: 'de-DE' } }, /"browser\.contextOptions\.locale" is not honoured: the browser's locale is not emulated/],
    [{ contextOptions: { timezoneId: 'Europe/Berlin' } }, /"browser\.contextOptions\.timezoneId" is not honoured/],
    [{ contextOptions: { colorScheme: 'dark' } }, /"browser\.contextOptions\.colorScheme" is not honoured: set it for the session with browser_emulate_media/],
    [{ contextOptions: { geolocation: { latitude: 91, longitude: 2 } } }, /"browser\.contextOptions\.geolocation" is not honoured: it is \{"latitude": -90\.\.90/],
    [{ contextOptions: { geolocation: { latitude: 1, longitude: 2, altitude: 3 } } }, /"browser\.contextOptions\.geolocation" is not honoured: it is \{"latitude"/],
    [{ contextOptions: { ignoreHTTPSErrors: true } }, /"browser\.contextOptions\.ignoreHTTPSErrors" is not honoured: certificate errors are never ignored/],
    [{ contextOptions: { storageState: 'state.json' } }, /"browser\.contextOptions\.storageState" is not honoured: import a storage state/],
    [{ contextOptions: { viewport: { width: 800 } } }, /"browser\.contextOptions\.viewport" is not honoured: it is \{"width": N, "height": N\}/],
    [{ contextOptions: { permissions: 'geolocation' } }, /"browser\.contextOptions\.permissions" is not honoured: it lists permission names/],
    [{ contextOptions: { permissions: ['teleport'] } }, /"teleport" is not a permission/],
    [{ contextOptions: { deviceScaleFactor: 9 } }, /"browser\.contextOptions\.deviceScaleFactor" is not honoured: it must be a number from 0\.25 to 5/],
    [{ contextOptions: { bogus: 1 } }, /"browser\.contextOptions\.bogus" is not honoured: glassbox launches and isolates its own Chromium/],
    [{ launchOptions: [] }, /"browser\.launchOptions" is not honoured: it is an object/],
    [{ userDataDir: '/tmp/x' }, /"browser\.userDataDir" is not honoured/],
  ]) {
    const f = configFile({ browser: cfg });
    const r = spawnSync(glassboxBin(), ['mcp', `--config=${f}`], {
      input: '', encoding: 'utf8', timeout: 60000,
      env: { ...process.env, GLASSBOX_DATA_DIR: data, GLASSBOX_CONFIG: POLICY },
    });
    assert.notEqual(r.status, 0, `${JSON.stringify(cfg)} was taken: ${r.stderr}`);
    assert.match(r.stderr, why, dump({ cfg, stderr: r.stderr }));
  }
  // the keys it takes start it
  const f = configFile({ browser: { browserName: 'chromium', isolated: true, launchOptions: { headless: true, chromiumSandbox: true, channel: 'chromium' }, contextOptions: { viewport: { width: 800, height: 600 }, deviceScaleFactor: 1, userAgent: 'UA/1', permissions: ['clipboard-read'], geolocation: { latitude: 0, longitude: 0 } } } });
  const r = spawnSync(glassboxBin(), ['mcp', `--config=${f}`], {
    input: '', encoding: 'utf8', timeout: 60000,
    env: { ...process.env, GLASSBOX_DATA_DIR: data, GLASSBOX_CONFIG: POLICY },
  });
  assert.equal(r.status, 0, r.stderr);
});
