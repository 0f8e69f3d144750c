/*
 * browser_emulate (Chrome DevTools MCP's emulate) with real Chromium and
 * the MCP SDK client: each setting applied and read back by the page,
 * kept across a navigation, in every open tab and in a tab opened
 * afterwards, cleared by
 * null / "No emulation"; invalid values refused before anything changes;
 * geolocation needs the permission; a User-Agent the policy pins cannot
 * be changed; the gate refuses it under a rule on kind "other"; each call
 * leaves its audit record; a denied host stays denied under throttling
 * and offline.
 */
import { test, describe, after } from 'node:test';
import {
  assert,
  openGlassbox,
  startFixtureServer,
  callTool,
  ok,
  sc,
  dump,
  evaluate,
  textOf,
  assertToolError,
  auditRecords,
} from '../e2e/lib.mjs';
import { writePolicy } from './interact_helpers.mjs';
import { useDrill, drillLog, LAYER_SETS } from './egress-drills.mjs';

/* glassbox with extra server flags (GLASSBOX_ARGS) and a policy file. */
async function start(args = [], config) {
  const saved = process.env.GLASSBOX_ARGS;
  process.env.GLASSBOX_ARGS = args.join(' ');
  try {
    return await openGlassbox(config ? { config } : {});
  } finally {
    if (saved === undefined) delete process.env.GLASSBOX_ARGS;
    else process.env.GLASSBOX_ARGS = saved;
  }
}

const UA = 'Mozilla/5.0 (Linux; Android 14) glassbox-emulated/1.0';
const PINNED = 'Mozilla/5.0 (X11; Linux x86_64) tenant-pinned/2.0';
const holdOther = writePolicy('loopback', { risk: { rules: [{ name: 'no-env-changes', decision: 'forbid', when: { kind: 'other' } }] } });
const pinned = writePolicy('loopback', { user_agent: PINNED });

let site;
const opened = [];
async function glassbox(args, config) {
  const gb = await start(args, config);
  opened.push(gb);
  return gb;
}
after(async () => {
  for (const gb of opened) {
    await gb.close();
    gb.removeDataDir();
  }
  if (site) await site.close();
});

const READ = `async () => ({ ua: navigator.userAgent, onLine: navigator.onLine, w: innerWidth, h: innerHeight,
  sw: screen.width, sh: screen.height, dpr: devicePixelRatio, touch: navigator.maxTouchPoints,
  pos: await new Promise((r) => navigator.geolocation.getCurrentPosition(
    (p) => r([p.coords.latitude, p.coords.longitude, p.coords.accuracy]), (e) => r('error ' + e.code), { maximumAge: 0, timeout: 5000 })) })`;

test('each setting is applied, seen by the page, kept after a navigation and in a new tab, then cleared', async () => {
  site = await startFixtureServer();
  const gb = await glassbox(['--grant-permissions=geolocation']);
  const c = gb.client;
  const page = site.url + '/interact/media.html';
  await ok(c, 'browser_navigate', { url: page });
  const own = await evaluate(c, READ);

  const r = await ok(c, 'browser_emulate', {
    networkConditions: 'Slow 4G',
    cpuThrottlingRate: 4,
    geolocation: { latitude: 48.8584, longitude: 2.2945, accuracy: 25 },
    userAgent: UA,
    viewport: { width: 412, height: 640, deviceScaleFactor: 2, isMobile: false, hasTouch: true },
  });
  const verdicts = sc(r).verdicts || [];
  assert.deepEqual(verdicts.map((v) => v.check).sort(),
    ['cpuThrottlingRate', 'geolocation', 'networkConditions', 'userAgent', 'viewport'], dump(r));
  assert.ok(verdicts.every((v) => v.ok === true), dump(r));
  assert.equal(sc(r).emulation.networkConditions, 'Slow 4G');
  assert.match(textOf(r), /### Result\nEmulating:\n- Network: Slow 4G \(download 180000 B\/s, upload 84375 B\/s, latency 562.5 ms\)/, textOf(r));
  assert.match(textOf(r), /- CPU: 4x slowdown/);

  const want = { ua: UA, onLine: true, w: 412, h: 640, sw: 412, sh: 640, dpr: 2, touch: 5, pos: [48.8584, 2.2945, 25] };
  assert.deepEqual(await evaluate(c, READ), want, 'the page sees every setting');

  await ok(c, 'browser_navigate', { url: page + '?again' });
  assert.deepEqual(await evaluate(c, READ), want, 'kept after a navigation');

  await ok(c, 'browser_tabs', { action: 'new' });
  await ok(c, 'browser_navigate', { url: page + '?tab2' });
  assert.deepEqual(await evaluate(c, READ), want, 'a tab opened afterwards has the same settings');

  // every preset: navigator.connection reports its latency and throughput
  for (const [preset, rtt, mbps] of [['Slow 3G', 2000, 0.4], ['Fast 3G', 562.5, 1.44], ['Fast 4G', 165, 8.1]]) {
    const p = await ok(c, 'browser_emulate', { networkConditions: preset });
    const v = sc(p).verdicts[0];
    assert.equal(v.ok, true, dump(p));
    assert.equal(v.expected.rtt, rtt);
    assert.ok(Math.abs(v.expected.downlink - mbps) < 0.01, JSON.stringify(v));
    assert.ok(v.observed.rtt >= rtt / 2 && v.observed.rtt <= rtt * 2, JSON.stringify(v));
  }

  // a mobile device: the screen is the device's, the layout follows the page
  const mobile = await ok(c, 'browser_emulate', { viewport: { width: 390, height: 844, deviceScaleFactor: 3, isMobile: true, hasTouch: true } });
  assert.equal(sc(mobile).verdicts[0].ok, true, dump(mobile));
  assert.deepEqual(await evaluate(c, '() => [screen.width, screen.height, devicePixelRatio, navigator.maxTouchPoints]'), [390, 844, 3, 5]);

  // Offline: navigator.onLine goes false; a request fails
  const off = await ok(c, 'browser_emulate', { networkConditions: 'Offline' });
  assert.equal(sc(off).verdicts[0].observed.onLine, false, dump(off));
  assert.equal(await evaluate(c, '() => navigator.onLine'), false);
  assert.equal(await evaluate(c, "async () => fetch('/interact/media.html').then(() => 'loaded', () => 'failed')"), 'failed');
  // the tab opened before the call has it too
  await ok(c, 'browser_tabs', { action: 'select', index: 0 });
  assert.equal(await evaluate(c, '() => navigator.onLine'), false, 'every open tab is offline');

  // cleared: null and "No emulation" give the browser's own back
  const cleared = await ok(c, 'browser_emulate', {
    networkConditions: 'No emulation',
    cpuThrottlingRate: null,
    geolocation: null,
    userAgent: null,
    viewport: null,
  });
  assert.ok((sc(cleared).verdicts || []).every((v) => v.ok), dump(cleared));
  assert.deepEqual(sc(cleared).emulation, {});
  const now = await evaluate(c, `() => ({ ua: navigator.userAgent, onLine: navigator.onLine, sw: screen.width, dpr: devicePixelRatio, touch: navigator.maxTouchPoints })`);
  assert.deepEqual(now, { ua: own.ua, onLine: own.onLine, sw: own.sw, dpr: own.dpr, touch: 0 });
  assert.equal(typeof (await evaluate(c, READ)).pos, 'string', 'no position without the override');
  await ok(c, 'browser_tabs', { action: 'select', index: 1 });
  assert.deepEqual(await evaluate(c, '() => [navigator.userAgent, navigator.maxTouchPoints]'), [own.ua, 0], 'cleared in the other tab too');

  // each call left its signed tool_call record, naming the tool and its arguments
  const ops = [r, off, cleared].map((x) => sc(x).operation_id);
  const records = auditRecords(gb.dataDir).filter((x) => x.kind === 'tool_call' && ops.includes(x.operation));
  assert.equal(records.length, 3, JSON.stringify(records.map((x) => x.operation)));
  assert.ok(records.every((x) => JSON.stringify(x.body).includes('browser_emulate')), JSON.stringify(records[0]).slice(0, 600));
});

test('invalid values are refused with a precise error, and nothing changes', async () => {
  const gb = await glassbox(['--grant-permissions=geolocation']);
  const c = gb.client;
  await ok(c, 'browser_navigate', { url: site.url + '/interact/media.html' });
  const before = await evaluate(c, '() => [navigator.userAgent, innerWidth, innerHeight]');
  const cases = [
    [{}, /at least one of networkConditions/],
    [{ networkConditions: 'Slow 5G' }, /networkConditions.*must be one of/],
    [{ cpuThrottlingRate: 0 }, /cpuThrottlingRate.*between 1 and 20/],
    [{ cpuThrottlingRate: 21 }, /cpuThrottlingRate.*between 1 and 20/],
    [{ geolocation: { latitude: 91, longitude: 0 } }, /geolocation\.latitude' must be a number from -90 to 90/],
    [{ geolocation: { longitude: 0 } }, /geolocation\.latitude' is required/],
    [{ geolocation: { latitude: 1, longitude: 2, altitude: 3 } }, /unknown member 'altitude' in 'geolocation'/],
    [{ userAgent: '' }, /userAgent' must be 1 to 1000 characters/],
    [{ userAgent: 'a\r\nX-Injected: 1' }, /userAgent' must be 1 to 1000 characters on one line/],
    [{ viewport: { width: 50, height: 600 } }, /viewport\.width' must be an integer from 100 to 10000/],
    [{ viewport: { width: 400.5, height: 600 } }, /viewport\.width' must be an integer/],
    [{ viewport: { width: 400, height: 600, isMobile: 'yes' } }, /viewport\.isMobile' must be true or false/],
    // a valid setting beside an invalid one: neither is applied
    [{ userAgent: UA, viewport: { width: 400 } }, /viewport\.height' is required/],
  ];
  for (const [args, message] of cases) {
    const e = await callTool(c, 'browser_emulate', args);
    assertToolError(e, JSON.stringify(args));
    assert.match(textOf(e), message, `${JSON.stringify(args)}: ${textOf(e)}`);
  }
  assert.deepEqual(await evaluate(c, '() => [navigator.userAgent, innerWidth, innerHeight]'), before);
});

test('geolocation without the permission is refused, saying how it is granted', async () => {
  const gb = await glassbox([]);
  await ok(gb.client, 'browser_navigate', { url: site.url + '/interact/media.html' });
  const e = await callTool(gb.client, 'browser_emulate', { geolocation: { latitude: 1, longitude: 2 }, userAgent: UA });
  assertToolError(e);
  assert.equal(sc(e).error?.code, 'geolocation_not_permitted', dump(e));
  assert.match(textOf(e), /--grant-permissions geolocation/);
  assert.notEqual(await evaluate(gb.client, '() => navigator.userAgent'), UA, 'nothing was changed');
});

test('a User-Agent the tenant policy pins is the browser\'s and cannot be changed; the rest can', async () => {
  const gb = await glassbox([], pinned);
  const c = gb.client;
  await ok(c, 'browser_navigate', { url: site.url + '/interact/media.html' });
  assert.equal(await evaluate(c, '() => navigator.userAgent'), PINNED);
  for (const userAgent of [UA, null]) {
    const e = await callTool(c, 'browser_emulate', { userAgent });
    assert.equal(sc(e).error?.code, 'user_agent_pinned', dump(e));
  }
  assert.equal(await evaluate(c, '() => navigator.userAgent'), PINNED);
  await ok(c, 'browser_emulate', { viewport: { width: 600, height: 400 } });
  assert.deepEqual(await evaluate(c, '() => [innerWidth, innerHeight, navigator.userAgent]'), [600, 400, PINNED]);
});

test('gate: a tenant rule on kind "other" refuses browser_emulate; the page is unchanged', async () => {
  const gb = await glassbox([], holdOther);
  await ok(gb.client, 'browser_navigate', { url: site.url + '/interact/media.html' });
  const read = '() => [navigator.userAgent, innerWidth]';
  const before = await evaluate(gb.client, read);
  const e = await callTool(gb.client, 'browser_emulate', { userAgent: UA, viewport: { width: 500, height: 500 } });
  assert.equal(sc(e).error?.code, 'forbidden', dump(e));
  assert.deepEqual(await evaluate(gb.client, read), before);
});

describe('egress under emulation: a denied host stays denied', () => {
  const run = useDrill({ layers: LAYER_SETS.all });
  after(() => {
    assert.deepEqual(run.denied.hits().requests, {}, 'the denied server saw a request');
    assert.equal(run.denied.connections(), 0, 'the denied server saw a connection');
  });

  test('throttled, then offline: the denied host is refused and never reached', async () => {
    const log = drillLog(run);
    await ok(run.client, 'browser_navigate', { url: run.shop('/interact/media.html') });
    await ok(run.client, 'browser_emulate', { networkConditions: 'Fast 4G', userAgent: UA });
    const nav = await log.call('browser_navigate', { url: run.evil('/leak/emulated-nav') });
    assertToolError(nav, 'navigating to a denied host');
    const got = await log.call('browser_evaluate', {
      function: `async () => fetch(${JSON.stringify(run.evil('/leak/emulated-fetch'))}).then(() => 'loaded', () => 'failed')`,
    });
    assert.equal(sc(got).result, 'failed', dump(got));
    await log.drainUntil((l) => l.blocked.some((b) => (b.url || '').includes('/leak/emulated-fetch')));
    assert.ok(log.blocked.some((b) => (b.url || '').includes('/leak/emulated-fetch')), JSON.stringify(log.blocked));
    // the allowed site still loads under throttling
    assert.equal(await evaluate(run.client, "async () => (await fetch('/interact/media.html')).status"), 200);
    await ok(run.client, 'browser_emulate', { networkConditions: 'Offline' });
    const off = await callTool(run.client, 'browser_navigate', { url: run.evil('/leak/offline-nav') });
    assertToolError(off, 'navigating to a denied host while offline');
    await ok(run.client, 'browser_emulate', { networkConditions: null, userAgent: null });
  });
});
