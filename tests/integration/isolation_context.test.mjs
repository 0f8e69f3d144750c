/*
 * Isolation "context" with real Chromium and the official MCP SDK client
 * over glassbox serve: the sessions of one tenant share one Chromium, each
 * in a browser context of its own, and none of one session's state
 * (cookies, localStorage, HTTP cache, CacheStorage, service workers,
 * downloads) is visible to another; popups and new tabs stay in their
 * session's context; a denied host stays refused for every
 * session with the proxy alone (zero hits on the denied server); another
 * tenant gets a browser of its own; closing one session leaves the others
 * working, and a crash of the shared browser fails each of its sessions
 * with a clear error, the next call starting a new one.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { assert, startFixtureServer, ok, callTool, sc, dump, textOf, pollUntil, snapshot, findRef, ElicitRequestSchema, REPO_ROOT } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';

const LOOPBACK = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
const CONTEXT = { ...LOOPBACK, isolation: 'context' };
// the proxy alone (and the network namespace where the machine allows):
// the tool and Fetch layers off, so a refusal can only come from the
// context's own proxy
const CONTEXT_PROXY_ONLY = { ...CONTEXT, egress_layers: { tool: false, fetch: false } };
// browser_evaluate needs a person's approval, asked through the client
const CONTEXT_ASKING = { ...CONTEXT, risk: { evaluate: 'approve', defaults: false }, approvals: { elicitation: true } };

let fixture;
let denied; // a server no session may reach: evil.test is denied
let cacheSrv;
let cacheHits = 0;
let svc;

before(async () => {
  fixture = await startFixtureServer();
  denied = await startFixtureServer();
  cacheSrv = http.createServer((req, res) => {
    cacheHits++;
    res.writeHead(200, { 'content-type': 'text/javascript', 'cache-control': 'public, max-age=3600', 'access-control-allow-origin': '*' });
    res.end('self.cached = 1;');
  });
  await new Promise((r) => cacheSrv.listen(0, '127.0.0.1', r));
  svc = await startServe({
    tenants: {
      alpha: { policy: CONTEXT, max_sessions: 4 },
      beta: { policy: CONTEXT },
      gamma: {}, // the default: a browser per session
      drill: { policy: CONTEXT_PROXY_ONLY, max_sessions: 4 },
      asking: { policy: CONTEXT_ASKING, max_sessions: 4 },
    },
    limits: { idle_ttl_s: 120 },
  });
});

after(async () => {
  if (svc) {
    const r = await svc.stop('SIGTERM');
    assert.equal(r.code, 0, `glassbox serve exited with ${JSON.stringify(r)}:\n${svc.stderr().slice(-3000)}`);
    assert.deepEqual(svc.chromiums(), [], 'no Chromium may be left after the stop');
    svc.removeDataDir();
  }
  if (fixture) await fixture.close();
  if (denied) await denied.close();
  if (cacheSrv) await new Promise((r) => cacheSrv.close(r));
});

/* The browser (main) processes of the service: the Chromium binary
 * without --type= (renderers, GPU and utility helpers carry one; the
 * crash handler is another binary). */
function browserMains() {
  return svc.chromiums().filter((pid) => {
    try {
      const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
      return /^chrom(e|ium)$/.test(path.basename(args[0])) && !args.some((a) => a.startsWith('--type='));
    } catch {
      return false;
    }
  });
}

/* Waits until the browsers of earlier tests' sessions are gone (a
 * session's close ends its browser after the answer to DELETE). */
async function noBrowsers() {
  const none = await pollUntil(() => browserMains().length === 0, { deadlineMs: 60000 });
  const which = browserMains().map((pid) => {
    try {
      const dir = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').find((a) => a.startsWith('--user-data-dir='));
      return `${pid} (${dir})`;
    } catch {
      return `${pid}`;
    }
  });
  assert.ok(none, `browsers of earlier sessions are still running: ${which.join(', ')}\n${svc.stderr().slice(-4000)}`);
}

async function evalIn(client, fn) {
  const r = await ok(client, 'browser_evaluate', { function: fn });
  return sc(r).result;
}

test('two sessions of one tenant share one Chromium, and none of one\'s state is visible to the other', async () => {
  const a = await svc.connect('alpha');
  const b = await svc.connect('alpha');
  try {
    const [ra, rb] = await Promise.all([
      ok(a.client, 'browser_navigate', { url: fixture.url + '/form.html' }),
      ok(b.client, 'browser_navigate', { url: fixture.url + '/form.html' }),
    ]);
    assert.equal(sc(ra).browser, 'shared', dump(ra));
    assert.equal(sc(rb).browser, 'shared', dump(rb));
    assert.equal(browserMains().length, 1, `one Chromium for both sessions: ${browserMains()}`);

    // cookies and localStorage: a's are a's only
    await evalIn(a.client, '() => { document.cookie = "ctx_a=1; path=/; max-age=3600"; localStorage.setItem("ctx_a", "1"); return document.cookie; }');
    assert.match(await evalIn(a.client, '() => document.cookie'), /ctx_a=1/, 'a keeps its own cookie');
    assert.equal(await evalIn(b.client, '() => document.cookie'), '', 'b sees no cookie of a');
    assert.equal(await evalIn(b.client, '() => localStorage.getItem("ctx_a")'), null, 'b sees no localStorage of a');

    // the HTTP cache: a's second load is from its cache, b's first is not
    const js = `http://127.0.0.1:${cacheSrv.address().port}/cached.js`;
    const load = `async () => { await (await fetch(${JSON.stringify(js)})).text(); return 1; }`;
    cacheHits = 0;
    await evalIn(a.client, load);
    await evalIn(a.client, load);
    assert.equal(cacheHits, 1, 'a\'s second load came from its cache');
    await evalIn(b.client, load);
    assert.equal(cacheHits, 2, 'b\'s load did not come from a\'s cache');

    // CacheStorage
    await evalIn(a.client, 'async () => { const c = await caches.open("ctx_a"); await c.put("/ctx-a-key", new Response("a")); return (await caches.keys()).length; }');
    assert.deepEqual(await evalIn(a.client, 'async () => caches.keys()'), ['ctx_a']);
    assert.deepEqual(await evalIn(b.client, 'async () => caches.keys()'), [], 'b sees no CacheStorage of a');

    // service workers: a's worker, active and controlling a page of its
    // scope, is not b's (b is on the same origin)
    await ok(a.client, 'browser_navigate', { url: fixture.url + '/egress/probe.html' });
    const reg = await evalIn(a.client, 'async () => { const r = await navigator.serviceWorker.register("/egress/sw.js"); const ready = await navigator.serviceWorker.ready; return [r.scope, ready.active ? "active" : "none"]; }');
    assert.match(reg[0], /\/egress\/$/);
    assert.equal(reg[1], 'active');
    assert.equal(await evalIn(a.client, 'async () => (await navigator.serviceWorker.getRegistrations()).length'), 1);
    assert.equal(await evalIn(b.client, 'async () => (await navigator.serviceWorker.getRegistrations()).length'), 0, 'b sees no service worker of a');

    // downloads: a's lands in a's area and is reported to a only
    await ok(a.client, 'browser_navigate', { url: fixture.url + '/files/download.html?size=4000' });
    const dl = await ok(a.client, 'browser_click', { target: '#report' });
    let got = sc(dl).downloads || [];
    if (!got.length) got = sc(await ok(a.client, 'browser_snapshot', {})).downloads || [];
    assert.equal(got.length, 1, dump(dl));
    assert.equal(got[0].state, 'completed', dump(dl));
    const seenByB = await ok(b.client, 'browser_snapshot', {});
    assert.equal(sc(seenByB).downloads, undefined, `b is told of no download: ${dump(seenByB)}`);
    assert.equal(browserMains().length, 1, 'still one Chromium');
  } finally {
    await a.transport.terminateSession().catch(() => {});
    await b.transport.terminateSession().catch(() => {});
  }
});

test('popups and new tabs stay in their session\'s context', async () => {
  await noBrowsers();
  const a = await svc.connect('alpha');
  const b = await svc.connect('alpha');
  const tabs = async (c) => sc(await ok(c.client, 'browser_tabs', { action: 'list' })).tabs;
  try {
    await ok(a.client, 'browser_navigate', { url: fixture.url + '/popup.html' });
    await ok(b.client, 'browser_navigate', { url: fixture.url + '/form.html' });
    await evalIn(a.client, '() => { document.cookie = "ctx_pop=1; path=/; max-age=3600"; return 1; }');
    await ok(a.client, 'browser_click', { target: findRef(await snapshot(a.client), 'button', 'Open popup') });
    const two = await pollUntil(async () => {
      const t = await tabs(a);
      return t.length === 2 && t.some((x) => x.url === fixture.url + '/second.html') ? t : null;
    });
    assert.ok(two, `a's popup is a's second tab: ${JSON.stringify(await tabs(a))}`);
    assert.equal((await tabs(b)).length, 1, 'b has its own tab only');
    const popup = two.find((t) => t.url === fixture.url + '/second.html');
    await ok(a.client, 'browser_tabs', { action: 'select', index: popup.index });
    assert.match(await evalIn(a.client, '() => document.cookie'), /ctx_pop=1/, 'the popup is in a\'s context');

    await ok(b.client, 'browser_tabs', { action: 'new' });
    await ok(b.client, 'browser_navigate', { url: fixture.url + '/second.html' });
    assert.equal(await evalIn(b.client, '() => document.cookie'), '', 'b\'s new tab is in b\'s context');
    assert.equal((await tabs(b)).length, 2);
    assert.equal((await tabs(a)).length, 2);
    assert.equal(browserMains().length, 1);
  } finally {
    await a.transport.terminateSession().catch(() => {});
    await b.transport.terminateSession().catch(() => {});
  }
});

test('while one session waits for a person, the other sessions of its browser open tabs and navigate', async () => {
  await noBrowsers();
  let release;
  const answered = new Promise((r) => { release = r; });
  let asked = false;
  const a = await svc.connect('asking', {
    capabilities: { elicitation: {} },
    setupClient: (c) => c.setRequestHandler(ElicitRequestSchema, async () => {
      asked = true;
      await answered; // the person answers once b is done
      return { action: 'accept', content: { approve: true } };
    }),
  });
  const b = await svc.connect('asking');
  try {
    await ok(a.client, 'browser_navigate', { url: fixture.url + '/form.html' });
    await ok(b.client, 'browser_navigate', { url: fixture.url + '/form.html' });
    const pending = callTool(a.client, 'browser_evaluate', { function: '() => 40 + 2' });
    assert.ok(await pollUntil(() => asked, { deadlineMs: 60000 }), 'a\'s client was asked');
    // b's new tab is a new target of the shared browser: a's connection
    // sees it too, and must let go of it while a waits for the person
    await ok(b.client, 'browser_tabs', { action: 'new' });
    const nav = await ok(b.client, 'browser_navigate', { url: fixture.url + '/second.html' });
    assert.equal(sc(nav).ok, true, dump(nav));
    release();
    const r = await pending;
    assert.equal(sc(r).ok, true, dump(r));
    assert.equal(sc(r).result, 42);
  } finally {
    release();
    await a.transport.terminateSession().catch(() => {});
    await b.transport.terminateSession().catch(() => {});
  }
});

test('a denied host is refused for each session of a shared browser by its own proxy: zero hits on the denied server', async () => {
  await noBrowsers();
  const a = await svc.connect('drill');
  const b = await svc.connect('drill');
  try {
    const allowed = '/egress/ok/drill.json'; // same origin as the page
    const deniedUrl = (n) => `http://evil.test:${denied.port}/egress/ok/${n}.json`;
    denied.reset();
    for (const [name, c] of [['a', a], ['b', b]]) {
      await ok(c.client, 'browser_navigate', { url: `http://shop.test:${fixture.port}/form.html` });
      const res = await evalIn(c.client, `async () => {
        const out = {};
        for (const [k, u] of [["allowed", ${JSON.stringify(allowed)}], ["denied", ${JSON.stringify(deniedUrl(name))}]]) {
          try { out[k] = (await (await fetch(u)).json()).ok ? "loaded" : "bad"; } catch (e) { out[k] = "error"; }
        }
        return out;
      }`);
      assert.deepEqual(res, { allowed: 'loaded', denied: 'error' }, `session ${name}`);
      // a navigation (the tool layer is off: the browser tries it)
      const nav = await callTool(c.client, 'browser_navigate', { url: `http://evil.test:${denied.port}/form.html` });
      const refused = (sc(nav).blocked || []).filter((x) => x.layer === 'proxy' && x.host === 'evil.test');
      assert.ok(refused.length >= 1, `session ${name}: no proxy refusal of evil.test: ${dump(nav)}`);
    }
    const hits = denied.hits();
    assert.deepEqual(hits.requests, {}, `the denied server saw requests: ${JSON.stringify(hits)}`);
  } finally {
    await a.transport.terminateSession().catch(() => {});
    await b.transport.terminateSession().catch(() => {});
  }
});

test('another tenant gets its own browser, and closing one session leaves the other working', async () => {
  await noBrowsers();
  const before = 0;
  const a = await svc.connect('alpha');
  const b = await svc.connect('alpha');
  const other = await svc.connect('beta');
  const own = await svc.connect('gamma');
  try {
    await Promise.all([a, b, other, own].map((c) => ok(c.client, 'browser_navigate', { url: fixture.url + '/form.html' })));
    assert.equal(browserMains().length, before + 3, 'alpha shares one browser; beta and gamma have one each');
    assert.equal(sc(await ok(own.client, 'browser_snapshot', {})).ok, true);

    await a.transport.terminateSession();
    const still = await ok(b.client, 'browser_navigate', { url: fixture.url + '/second.html' });
    assert.equal(sc(still).ok, true, dump(still));
    assert.match(await evalIn(b.client, '() => location.pathname'), /second\.html$/);
    assert.equal(browserMains().length, before + 3, 'alpha\'s browser stays while b has it');

    await b.transport.terminateSession();
    const gone = await pollUntil(() => browserMains().length === before + 2, { deadlineMs: 30000 });
    assert.ok(gone, `alpha's shared browser ends with its last session: ${browserMains().length} browsers`);
  } finally {
    for (const c of [a, b, other, own]) await c.transport.terminateSession().catch(() => {});
  }
});

test('a crash of the shared browser fails each of its sessions with a clear error, and the next call gets a new one', async () => {
  await noBrowsers();
  const a = await svc.connect('beta');
  const b = await svc.connect('beta');
  try {
    await ok(a.client, 'browser_navigate', { url: fixture.url + '/form.html' });
    await ok(b.client, 'browser_navigate', { url: fixture.url + '/form.html' });
    const beta = browserMains();
    assert.equal(beta.length, 1, `beta's two sessions have one browser: ${beta}`);
    process.kill(beta[0], 'SIGKILL');
    for (const c of [a, b]) {
      const r = await callTool(c.client, 'browser_snapshot', {});
      assert.equal(r.isError, true, dump(r));
      assert.equal(sc(r).error.code, 'browser_crashed', dump(r));
      assert.match(textOf(r), /shared browser/, dump(r));
    }
    const again = await ok(a.client, 'browser_navigate', { url: fixture.url + '/second.html' });
    assert.equal(sc(again).ok, true, dump(again));
    const bToo = await ok(b.client, 'browser_navigate', { url: fixture.url + '/second.html' });
    assert.equal(sc(bToo).ok, true, dump(bToo));
    const fresh = browserMains().filter((pid) => pid !== beta[0]);
    assert.equal(fresh.length, 1, `one new browser for both: ${fresh}`);
  } finally {
    await a.transport.terminateSession().catch(() => {});
    await b.transport.terminateSession().catch(() => {});
  }
});
