/*
 * egress-drills.mjs - the egress drills (DESIGN.md, "Security layers";
 * docs/egress.md), shared by tests/integration/egress*.test.mjs: each of
 * those files runs them under one combination of layers, so that each
 * layer is shown to hold on its own.
 *
 * The set-up of one drill run:
 *   - the allowed site: a fixture server reached as shop.test:<M> (and
 *     127.0.0.1:<M> for a secure-context page: service workers);
 *   - the denied site: a second fixture server, its own counters, on
 *     127.0.0.1:<D>; the policy lets it be reached through the name
 *     evil.test only (deny: evil.test; its resolver entry points at it), so a
 *     hole in any layer shows as a hit there. 127.0.0.1:<D> and
 *     shop.test:<D> are refused for their port: allow pins shop.test and
 *     127.0.0.1 to <M>; portless.test (mapped to 127.0.0.1) is allowed
 *     without a port, which means ports 80 and 443 only, so
 *     portless.test:<D> is refused too, and the refusal names the port;
 *   - fixtures/policy/egress-drill.json plus those two pinned allow entries
 *     and "egress_layers", written to the run's temp dir;
 *   - with the proxy off, Chromium gets its own resolver rules (a wrapper
 *     around the binary): shop.test and evil.test are 127.0.0.1 and every
 *     other name is NOTFOUND, so nothing is ever looked up in real DNS.
 *     The drills that point a name at 169.254.169.254 or 10.0.0.1 run only
 *     with the proxy on: the proxy refuses before connecting.
 *
 * Every drill asserts: the denied server saw no request for that channel
 * (and, at the end, no request and no connection at all); the refusal is in
 * structuredContent.blocked of the calls the drill made, from an enabled
 * layer, with the expected rule; and the allowed counterpart on the same
 * page loaded (the page saw it, and the allowed server counted it).
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  assert,
  REPO_ROOT,
  openGlassbox,
  startFixtureServer,
  callTool,
  sc,
  dump,
  pollUntil,
  snapshot,
  findRef,
} from '../e2e/lib.mjs';

/* Channels that run together on one page load (fixtures/site/egress/probe.js). */
export const SUBRESOURCE_CHANNELS = [
  'fetch',
  'fetch-redirect',
  'xhr',
  'img',
  'img-redirect',
  'script',
  'iframe',
  'css',
  'eventsource',
  'websocket',
  'beacon',
  'worker',
];

/* Layer 4 (netns) is on wherever glassbox can make a network namespace,
 * unless a set turns it off: without the proxy, a browser in a namespace
 * of its own reaches nothing (egress-netns.test.mjs drills that). */
export const LAYER_SETS = {
  all: { tool: true, fetch: true, proxy: true },
  fetch: { tool: false, fetch: true, proxy: false, netns: false },
  proxy: { tool: false, fetch: false, proxy: true },
  tool: { tool: true, fetch: false, proxy: false, netns: false },
};

function chromiumBinary() {
  if (process.env.GLASSBOX_CHROMIUM) return process.env.GLASSBOX_CHROMIUM;
  return fs.existsSync('/usr/lib/chromium/chromium') ? '/usr/lib/chromium/chromium' : '/usr/bin/chromium';
}

/* A Chromium wrapper with resolver rules, for runs without the proxy. */
function writeChromiumWrapper(dir) {
  const rules = 'MAP shop.test 127.0.0.1, MAP evil.test 127.0.0.1, MAP portless.test 127.0.0.1, MAP * ~NOTFOUND, EXCLUDE localhost, EXCLUDE 127.0.0.1';
  const file = path.join(dir, 'chromium-drill');
  fs.writeFileSync(file, `#!/bin/sh\nexec '${chromiumBinary()}' "$@" '--host-resolver-rules=${rules}'\n`, { mode: 0o755 });
  return file;
}

/*
 * Starts the two sites and a glassbox under the given layers and policy
 * file (fixtures/policy/egress-drill.json unless given; allowMain adds
 * shop.test:<M> and 127.0.0.1:<M> to its allow list; isolation, when
 * given, is the policy's "isolation"). Registers the
 * before/after hooks; returns the run object, filled in by `before`.
 */
export function useDrill({ layers, policyFile = 'egress-drill.json', allowMain = true, isolation }) {
  const run = {
    layers,
    enabled: Object.keys(layers).filter((k) => layers[k]),
    allowed: null,
    denied: null,
    gb: null,
    client: null,
    tmp: null,
    M: 0,
    D: 0,
    shop: (p) => `http://shop.test:${run.M}${p}`,
    local: (p) => `http://127.0.0.1:${run.M}${p}`,
    evil: (p) => `http://evil.test:${run.D}${p}`,
  };
  before(async () => {
    run.allowed = await startFixtureServer();
    run.denied = await startFixtureServer();
    run.M = run.allowed.port;
    run.D = run.denied.port;
    run.tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-egress-'));
    const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', policyFile), 'utf8'));
    if (allowMain) policy.egress.allow.push(`shop.test:${run.M}`, `127.0.0.1:${run.M}`);
    policy.egress_layers = layers;
    if (isolation) policy.isolation = isolation;
    const config = path.join(run.tmp, 'policy.json');
    fs.writeFileSync(config, JSON.stringify(policy, null, 2));
    const env = layers.proxy ? {} : { GLASSBOX_CHROMIUM: writeChromiumWrapper(run.tmp) };
    run.gb = await openGlassbox({ dataDir: path.join(run.tmp, 'data'), config, env });
    run.client = run.gb.client;
  });
  after(async () => {
    if (run.gb) await run.gb.close();
    if (run.allowed) await run.allowed.close();
    if (run.denied) await run.denied.close();
    if (run.tmp && process.env.GLASSBOX_KEEP_DATA !== '1') fs.rmSync(run.tmp, { recursive: true, force: true });
  });
  return run;
}

/*
 * One drill's log: every call it makes goes through call(), which keeps
 * the results and gathers their `blocked` entries.
 */
export function drillLog(run) {
  const log = {
    results: [],
    blocked: [],
    async call(name, args = {}) {
      const r = await callTool(run.client, name, args);
      log.results.push(r);
      for (const b of sc(r).blocked || []) log.blocked.push(b);
      return r;
    },
    /* Calls a cheap tool until pred(log) holds or ms pass: refusals that
     * arrive after the action that caused them land in the next result. */
    async drainUntil(pred, ms = 4000) {
      const end = Date.now() + ms;
      do {
        await log.call('browser_evaluate', { function: '() => 1' });
        if (pred(log)) return true;
        await new Promise((r) => setTimeout(r, 100));
      } while (Date.now() < end);
      return false;
    },
    dump() {
      return JSON.stringify(log.blocked, null, 1).slice(0, 6000);
    },
  };
  return log;
}

/* Navigates to the probe page and waits until its subresource channels
 * settled (a page that navigates away is not waited for). */
export async function runProbe(run, log, { origin, params, navigates = false }) {
  const url = `${origin}/egress/probe.html?${new URLSearchParams(params)}`;
  const nav = await log.call('browser_navigate', { url });
  assert.ok(!nav.isError, `the drill page loads: ${dump(nav)}`);
  if (navigates) return null;
  const r = await log.call('browser_evaluate', {
    function: `async () => {
      const end = Date.now() + 15000;
      while (!(window.__drill && window.__drill.done) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
      return window.__drill || null;
    }`,
  });
  const drill = sc(r).result;
  assert.ok(drill && drill.done, `the drill page finished: ${dump(r)}`);
  return drill.results;
}

/* The blocked entries for a denied URL: by its path (tag + channel), or, for
 * a tunnel (CONNECT carries no path), by host:port. */
export function refusalsFor(log, { pathPart, tunnel }) {
  return log.blocked.filter(
    (b) => (b.url || '').includes(pathPart) || (tunnel && b.method === 'CONNECT' && b.url === tunnel),
  );
}

/* Asserts that one refusal from an enabled layer (layer: that one) with one
 * of the rules is in the log. */
export function assertRefused(run, log, { pathPart, tunnel, rules, layer, what }) {
  const got = refusalsFor(log, { pathPart, tunnel });
  assert.ok(got.length > 0, `${what}: the refusal is in structuredContent.blocked: ${log.dump()}`);
  for (const b of got) {
    assert.ok(run.enabled.includes(b.layer), `${what}: refused by an enabled layer (${run.enabled}): ${JSON.stringify(b)}`);
    if (layer) assert.equal(b.layer, layer, `${what}: refused by the ${layer} layer: ${JSON.stringify(b)}`);
    assert.ok(rules.includes(b.rule), `${what}: rule ${b.rule} is one of ${rules}: ${JSON.stringify(b)}`);
  }
}

/*
 * Channels the layers of a run cannot stop, as found by these drills: the
 * test still runs and asserts, but as a todo (reported, not failing the
 * suite) with the reason. With the Fetch layer alone (no proxy), CDP Fetch
 * never sees a WebSocket handshake, and neither Network.setBlockedURLs nor
 * any other CDP means stops one: WebSockets reach the denied server. The
 * proxy stops them (every connection Chromium makes ends at the proxy), and
 * so does the network namespace.
 * (Chromium's early connections to the host of an iframe, a popup or a
 * link, before any request exists, are off: glassbox turns network
 * prediction off in every profile, sessions/prefs.c.)
 */
export function knownLeak(run, channel) {
  if (run.layers.proxy || !run.layers.fetch) return undefined;
  if (channel === 'websocket')
    return 'leak: CDP Fetch interception does not see WebSocket handshakes; only the egress proxy stops them';
  return undefined;
}

/* The layer a single-layer run must refuse with (all layers on: any). */
function soleLayer(run) {
  return run.enabled.length === 1 ? run.enabled[0] : undefined;
}

export function deniedHits(run, prefix) {
  const paths = run.denied.hits().paths;
  return Object.keys(paths)
    .filter((p) => p.startsWith(prefix))
    .reduce((n, p) => n + paths[p], 0);
}

/* Closes every tab but the first (popups) and goes back to it. */
async function closeExtraTabs(run) {
  for (;;) {
    const tabs = sc(await callTool(run.client, 'browser_tabs', { action: 'list' })).tabs || [];
    if (tabs.length <= 1) break;
    await callTool(run.client, 'browser_tabs', { action: 'close', index: tabs[tabs.length - 1].index });
  }
  await callTool(run.client, 'browser_tabs', { action: 'select', index: 0 });
}

/*
 * Registers the drills on the denied host (and, with the proxy on, the
 * resolver-override drills) for one run.
 */
export function defineDrills(run) {
  const layerName = Object.entries(run.layers)
    .map(([k, v]) => `${k} ${v ? 'on' : 'off'}`)
    .join(', ');
  const DENY_RULES = ['egress-deny'];
  const PORT_RULES = ['egress-not-allowed'];

  /* ---- subresources, on one page load ---- */
  let sub = null;
  const subLog = { log: null };
  test(`[${layerName}] subresource channels to evil.test: the page runs them all`, async () => {
    run.allowed.reset();
    subLog.log = drillLog(run);
    sub = await runProbe(run, subLog.log, {
      origin: run.shop(''),
      params: { chs: SUBRESOURCE_CHANNELS.join(','), base: `http://evil.test:${run.D}` },
    });
    // late refusals (beacons) and late allowed loads (beacons, CSS)
    await subLog.log.drainUntil(
      (l) => SUBRESOURCE_CHANNELS.filter((c) => !knownLeak(run, c)).every((c) => refusalsFor(l, { pathPart: `/leak/${c}`, tunnel: c === 'websocket' ? `evil.test:${run.D}` : null }).length > 0),
    );
    await pollUntil(() => run.allowed.hits().paths['/egress/ok/beacon.txt'] >= 1, { deadlineMs: 4000 });
  });

  const ALLOWED_PATH = {
    fetch: '/egress/ok/fetch.json',
    'fetch-redirect': '/egress/ok/fetch-redirect.json',
    xhr: '/egress/ok/xhr.json',
    img: '/egress/ok/img.png',
    'img-redirect': '/egress/ok/img-redirect.png',
    script: '/egress/ok/script.js',
    iframe: '/egress/ok/iframe.html',
    css: '/egress/ok/css.png',
    eventsource: '/egress/sse/eventsource',
    websocket: '/egress/ws/websocket',
    beacon: '/egress/ok/beacon.txt',
    worker: '/egress/ok/worker.json',
  };
  const PAGE_SAW = {
    eventsource: 'message: hello eventsource',
    websocket: 'message: hello',
  };

  for (const ch of SUBRESOURCE_CHANNELS) {
    test(`[${layerName}] ${ch} to a denied host is refused; its allowed twin loads`, { todo: knownLeak(run, ch) }, () => {
      assert.ok(sub, 'the drill page ran');
      const got = sub[ch];
      assert.ok(got, `the page reported on ${ch}: ${JSON.stringify(sub)}`);
      assert.equal(deniedHits(run, `/leak/${ch}`), 0, `${ch}: the denied server saw nothing: ${JSON.stringify(run.denied.hits())}`);
      assertRefused(run, subLog.log, {
        pathPart: `/leak/${ch}`,
        tunnel: ch === 'websocket' ? `evil.test:${run.D}` : null,
        rules: DENY_RULES,
        layer: soleLayer(run),
        what: ch,
      });
      assert.equal(got.allowed, PAGE_SAW[ch] || 'loaded', `${ch}: the allowed request loaded in the page: ${JSON.stringify(got)}`);
      assert.ok(run.allowed.hits().paths[ALLOWED_PATH[ch]] >= 1, `${ch}: the allowed server served ${ALLOWED_PATH[ch]}: ${JSON.stringify(run.allowed.hits())}`);
      const mine = subLog.log.blocked.filter((b) => (b.host || '').startsWith('shop.test') || (b.url || '').includes(`shop.test:${run.M}`));
      assert.deepEqual(mine, [], 'nothing on the allowed host was refused');
    });
  }

  /* ---- a service worker (needs a secure context: 127.0.0.1) ---- */
  test(`[${layerName}] a service worker's fetch to a denied host is refused; its allowed fetch loads`, async () => {
    run.allowed.reset();
    const log = drillLog(run);
    const res = await runProbe(run, log, {
      origin: run.local(''),
      params: { chs: 'serviceworker', base: `http://evil.test:${run.D}` },
    });
    await log.drainUntil((l) => refusalsFor(l, { pathPart: '/leak/serviceworker' }).length > 0);
    assert.equal(deniedHits(run, '/leak/serviceworker'), 0, JSON.stringify(run.denied.hits()));
    assertRefused(run, log, { pathPart: '/leak/serviceworker', rules: DENY_RULES, layer: soleLayer(run), what: 'service worker' });
    assert.equal(res.serviceworker.allowed, 'loaded', JSON.stringify(res));
    assert.ok(run.allowed.hits().paths['/egress/ok/serviceworker.json'] >= 1, JSON.stringify(run.allowed.hits()));
  });

  /* ---- a popup ---- */
  test(`[${layerName}] a window.open popup to a denied host is refused; an allowed popup loads`, async () => {
    run.allowed.reset();
    const log = drillLog(run);
    try {
      const res = await runProbe(run, log, { origin: run.shop(''), params: { chs: 'popup', base: `http://evil.test:${run.D}` } });
      assert.equal(res.popup.allowed, 'opened', JSON.stringify(res));
      await log.drainUntil(
        (l) => refusalsFor(l, { pathPart: '/leak/popup' }).length > 0 && run.allowed.hits().paths['/egress/ok/popup.html'] >= 1,
      );
      assert.equal(deniedHits(run, '/leak/popup'), 0, JSON.stringify(run.denied.hits()));
      assertRefused(run, log, { pathPart: '/leak/popup', rules: DENY_RULES, layer: soleLayer(run), what: 'popup' });
      assert.ok(run.allowed.hits().paths['/egress/ok/popup.html'] >= 1, JSON.stringify(run.allowed.hits()));
    } finally {
      await closeExtraTabs(run);
    }
  });

  /* ---- navigations ---- */
  async function navigationDrill(name, start, { tag, clickLink = false }) {
    run.allowed.reset();
    const log = drillLog(run);
    const pathPart = `/leak/${tag}`;
    if (clickLink) {
      const r = await log.call('browser_navigate', { url: start });
      assert.ok(!r.isError, dump(r));
      const ref = findRef(await snapshot(run.client), 'link', 'Denied link');
      await log.call('browser_click', { target: ref, element: 'Denied link' });
    } else {
      await log.call('browser_navigate', { url: start });
    }
    await log.drainUntil((l) => refusalsFor(l, { pathPart }).length > 0);
    assert.equal(deniedHits(run, pathPart), 0, `${name}: the denied server saw nothing: ${JSON.stringify(run.denied.hits())}`);
    return log;
  }

  test(`[${layerName}] browser_navigate to a denied host is refused`, async () => {
    const log = await navigationDrill('navigate', run.evil('/leak/navigate'), { tag: 'navigate' });
    const first = log.results[0];
    assertRefused(run, log, {
      pathPart: '/leak/navigate',
      rules: DENY_RULES,
      layer: run.layers.tool ? 'tool' : soleLayer(run),
      what: 'navigate',
    });
    if (run.layers.tool) assert.equal(first.isError, true, `the tool refuses: ${dump(first)}`);
  });

  const redirects = [
    ['a 302 chain from the allowed host', (to) => run.shop(`/egress/302?to=${encodeURIComponent(run.shop(`/egress/302?to=${encodeURIComponent(to)}`))}`), '302'],
    ['a meta refresh', (to) => run.shop(`/egress/refresh?to=${encodeURIComponent(to)}`), 'meta'],
  ];
  for (const [what, start, tag] of redirects) {
    test(`[${layerName}] ${what} to a denied host is refused; the allowed hops load`, async () => {
      const log = await navigationDrill(what, start(run.evil(`/leak/${tag}`)), { tag });
      assertRefused(run, log, { pathPart: `/leak/${tag}`, rules: DENY_RULES, layer: soleLayer(run), what });
      const hits = run.allowed.hits().paths;
      assert.ok((hits['/egress/302'] || 0) + (hits['/egress/refresh'] || 0) >= 1, JSON.stringify(hits));
    });
  }

  for (const ch of ['js-location', 'form']) {
    test(`[${layerName}] ${ch === 'form' ? 'a form POST' : 'a JS location change'} to a denied host is refused`, async () => {
      run.allowed.reset();
      const log = drillLog(run);
      await runProbe(run, log, { origin: run.shop(''), params: { chs: ch, base: `http://evil.test:${run.D}` }, navigates: true });
      await log.drainUntil((l) => refusalsFor(l, { pathPart: `/leak/${ch}` }).length > 0);
      assert.equal(deniedHits(run, `/leak/${ch}`), 0, JSON.stringify(run.denied.hits()));
      assertRefused(run, log, { pathPart: `/leak/${ch}`, rules: DENY_RULES, layer: soleLayer(run), what: ch });
      assert.ok(run.allowed.hits().paths['/egress/probe.js'] >= 1, 'the allowed page and its script loaded');
    });
  }

  test(`[${layerName}] a link click to a denied host is refused`, async () => {
    const log = await navigationDrill('link', run.shop(`/egress/links.html?to=${encodeURIComponent(run.evil('/leak/link'))}`), {
      tag: 'link',
      clickLink: true,
    });
    assertRefused(run, log, { pathPart: '/leak/link', rules: DENY_RULES, layer: soleLayer(run), what: 'link click' });
  });

  /* ---- the denied server by address, and by an allowed name on its port ---- */
  const ipDrills = {};
  for (const [what, host, tag] of [
    ['by its address (127.0.0.1, a port the policy does not allow)', '127.0.0.1', 'ip-'],
    ['by an allowed name on a port the policy does not allow', 'shop.test', 'port-'],
    ['by a name allowed without a port (ports 80 and 443), mapped to its address', 'portless.test', 'portless-'],
    ['by that name with a trailing dot (the same host)', 'portless.test.', 'dot-'],
  ]) {
    const chs = ['fetch', 'img', 'websocket'];
    test(`[${layerName}] the denied server ${what}: the page tries ${chs}`, async () => {
      run.allowed.reset();
      const log = drillLog(run);
      const res = await runProbe(run, log, { origin: run.shop(''), params: { chs: chs.join(','), base: `http://${host}:${run.D}`, tag } });
      await log.drainUntil((l) => chs.filter((c) => !knownLeak(run, c)).every((c) => refusalsFor(l, { pathPart: `/leak/${tag}${c}`, tunnel: c === 'websocket' ? `${host}:${run.D}` : null }).length > 0));
      ipDrills[tag] = { log, res };
    });
    for (const c of chs) {
      test(`[${layerName}] ${c}: the denied server ${what} is refused`, { todo: knownLeak(run, c) }, () => {
        const { log, res } = ipDrills[tag];
        assert.equal(deniedHits(run, `/leak/${tag}${c}`), 0, `${c}: ${JSON.stringify(run.denied.hits())}`);
        assertRefused(run, log, {
          pathPart: `/leak/${tag}${c}`,
          tunnel: c === 'websocket' ? `${host}:${run.D}` : null,
          rules: PORT_RULES,
          layer: soleLayer(run),
          what: `${c} ${what}`,
        });
        for (const b of refusalsFor(log, { pathPart: `/leak/${tag}${c}`, tunnel: c === 'websocket' ? `${host}:${run.D}` : null }))
          assert.ok((b.message || '').includes(`${host.replace(/\.$/, '')}${host.startsWith('portless.test') ? ' port ' : ':'}${run.D}`), `${c}: the refusal names the port: ${JSON.stringify(b)}`);
        assert.equal(res[c].allowed, PAGE_SAW[c] || 'loaded', `${c}: ${JSON.stringify(res)}`);
      });
    }
  }

  /* ---- file: ---- */
  test(`[${layerName}] file:///etc/passwd by browser_navigate is refused`, async () => {
    const log = drillLog(run);
    await log.call('browser_navigate', { url: run.shop('/egress/links.html') });
    const r = await log.call('browser_navigate', { url: 'file:///etc/passwd' });
    assert.equal(r.isError, true, dump(r));
    assert.ok(log.blocked.some((b) => b.url === 'file:///etc/passwd' && b.layer === 'tool'), log.dump());
    const href = sc(await log.call('browser_evaluate', { function: '() => location.href' })).result;
    assert.equal(href, run.shop('/egress/links.html'), 'the page did not move');
  });

  test(`[${layerName}] file:///etc/passwd by a link click does not load`, async () => {
    const log = drillLog(run);
    await log.call('browser_navigate', { url: run.shop('/egress/links.html') });
    const ref = findRef(await snapshot(run.client), 'link', 'Password file');
    await log.call('browser_click', { target: ref, element: 'Password file' });
    await new Promise((r) => setTimeout(r, 300));
    await closeExtraTabs(run);
    const shown = sc(await log.call('browser_evaluate', { function: '() => location.href + "\\n" + document.body.innerText' })).result;
    assert.ok(!/^file:/.test(shown), `no file: page is shown: ${shown}`);
    assert.doesNotMatch(shown, /root:.*:0:0:/, 'the password file is not shown');
    for (const r of log.results) assert.doesNotMatch(JSON.stringify(r), /root:[^"]*:0:0:/, 'no result carries the password file');
  });

  /* ---- resolver overrides into refused ranges: only with the proxy on ---- */
  if (run.layers.proxy) {
    for (const [what, host, rule] of [
      ['169.254.169.254 (cloud metadata)', 'meta.test', 'addr-metadata'],
      ['10.0.0.1 (private)', 'intranet.test', 'addr-private'],
    ]) {
      test(`[${layerName}] an allowed name whose resolver entry is ${what} is refused before connecting`, async () => {
        run.allowed.reset();
        const log = drillLog(run);
        const tag = `${host.split('.')[0]}-`;
        const chs = ['fetch', 'img', 'websocket'];
        const res = await runProbe(run, log, { origin: run.shop(''), params: { chs: chs.join(','), base: `http://${host}`, tag } });
        await log.drainUntil((l) => chs.every((c) => refusalsFor(l, { pathPart: `/leak/${tag}${c}`, tunnel: c === 'websocket' ? `${host}:80` : null }).length > 0));
        for (const c of chs) {
          assertRefused(run, log, {
            pathPart: `/leak/${tag}${c}`,
            tunnel: c === 'websocket' ? `${host}:80` : null,
            rules: [rule],
            layer: soleLayer(run),
            what: `${c} to ${host}`,
          });
          assert.equal(res[c].allowed, PAGE_SAW[c] || 'loaded', `${c}: ${JSON.stringify(res)}`);
        }
        // and by the tool
        const nav = drillLog(run);
        await nav.call('browser_navigate', { url: `http://${host}/latest/meta-data/` });
        await nav.drainUntil((l) => refusalsFor(l, { pathPart: '/latest/meta-data/' }).length > 0);
        assertRefused(run, nav, { pathPart: '/latest/meta-data/', rules: [rule], layer: run.layers.tool ? 'tool' : 'proxy', what: `navigate to ${host}` });
      });
    }
  }

  /* ---- at the end: nothing at all reached the denied server ---- */
  const leaked = (k) => knownLeak(run, k.split('/').pop().replace(/^(ip|port|portless|dot)-/, ''));
  test(`[${layerName}] the denied server saw no request`, async () => {
    await new Promise((r) => setTimeout(r, 300));
    const { requests } = run.denied.hits();
    const unknown = Object.keys(requests).filter((k) => !leaked(k));
    assert.deepEqual(unknown, [], `requests that reached the denied server: ${JSON.stringify(requests)}`);
  });

  /* Not even a TCP connection without a request (a preconnect): each one
   * the known leaks above made (a WebSocket handshake: one connection each)
   * is the only kind allowed. */
  const besides = knownLeak(run, 'websocket') ? ' besides the WebSocket handshakes above' : '';
  test(`[${layerName}] the denied server saw no connection either${besides}`, () => {
    const { requests } = run.denied.hits();
    const known = Object.entries(requests).filter(([k]) => leaked(k)).reduce((n, [, v]) => n + v, 0);
    assert.equal(run.denied.connections() - known, 0, `connections: ${run.denied.connections()}, known leaks: ${known} (requests: ${JSON.stringify(requests)})`);
  });
}

/*
 * The tool layer alone (Fetch and proxy off): it judges the URLs tools are
 * given, so its drills are browser_navigate's. (Requests a page makes are
 * the other layers' job: with those off they go out, by design.)
 */
export function defineToolDrills(run) {
  const layerName = Object.entries(run.layers)
    .map(([k, v]) => `${k} ${v ? 'on' : 'off'}`)
    .join(', ');
  const cases = [
    ['a denied host', () => run.evil('/leak/tool-navigate'), ['egress-deny']],
    ['the denied server by address, on a port the policy does not allow', () => `http://127.0.0.1:${run.D}/leak/tool-ip`, ['egress-not-allowed']],
    ['the denied server by an allowed name, on a port the policy does not allow', () => `http://shop.test:${run.D}/leak/tool-port`, ['egress-not-allowed']],
    ['the denied server by a name allowed without a port', () => `http://portless.test:${run.D}/leak/tool-portless`, ['egress-not-allowed'], 'portless.test port'],
    ['the denied server by that name with a trailing dot', () => `http://portless.test.:${run.D}/leak/tool-portless-dot`, ['egress-not-allowed'], 'portless.test port'],
  ];
  for (const [what, url, rules, says] of cases) {
    test(`[${layerName}] browser_navigate to ${what} is refused before the browser acts`, async () => {
      const log = drillLog(run);
      await log.call('browser_navigate', { url: run.shop('/egress/links.html') });
      const r = await log.call('browser_navigate', { url: url() });
      assert.equal(r.isError, true, dump(r));
      const got = log.blocked.filter((b) => b.url === url());
      assert.equal(got.length, 1, log.dump());
      assert.equal(got[0].layer, 'tool');
      assert.ok(rules.includes(got[0].rule), JSON.stringify(got[0]));
      if (says) {
        const text = r.content.map((c) => c.text || '').join('\n');
        assert.ok(text.includes(`${says} ${run.D}`) && text.includes('egress-not-allowed'), `the error names the rule and the port: ${text}`);
        // and the line that would allow it, in the policy file glassbox was given
        assert.ok(text.includes(`add to ${path.join(run.tmp, 'policy.json')}: "egress": {"allow": ["portless.test:${run.D}"]}`), `the error shows the line to add: ${text}`);
      }
      const href = sc(await log.call('browser_evaluate', { function: '() => location.href' })).result;
      assert.equal(href, run.shop('/egress/links.html'), 'the page did not move');
    });
  }
  test(`[${layerName}] the denied server saw no request and no connection`, () => {
    assert.deepEqual(run.denied.hits(), { paths: {}, requests: {} });
    assert.equal(run.denied.connections(), 0);
  });
}
