/*
 * cdp_policed.test.mjs - the CDP endpoint holds glassbox's boundary
 * against its own client (docs/cdp.md): each filtered method is refused
 * with a CDP error naming its rule (and recorded), a client that sends
 * huge frames, malformed JSON, 10k pending calls or goes away mid-call
 * disturbs no other session, tenants only ever find their own sessions
 * (another tenant's token gets the 404 of an unknown id), the policy's
 * cdp switch defaults to deny, and input the risk rules hold is refused
 * unless cdp.gates is "off". Real Chromium behind the relay, raw
 * websockets (ws) and Playwright as clients.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import net from 'node:net';
import { startFixtureServer, pollUntil, Client, StreamableHTTPClientTransport } from '../e2e/lib.mjs';
import { chromium } from '../e2e/cdp-libs.mjs';
import { startCdpServe, cdpPolicy, newSession, postSession, rawClient, refusedUpgrade, records, waitRecord, baseOf } from './cdp_helpers.mjs';

let site;
let svc;
let main; // a session of tenant a with a raw client on it
let other; // another session of tenant a that must keep working

before(async () => {
  site = await startFixtureServer();
  // tenant a: the shipped risk rules (gates on); b: gates off
  const gated = cdpPolicy();
  delete gated.risk;
  const ungated = cdpPolicy({ cdp: { access: 'allow', gates: 'off' } });
  delete ungated.risk;
  svc = await startCdpServe({ policyA: gated, policyB: ungated });
  main = await newSession(svc, 'a');
  other = await newSession(svc, 'a');
});

after(async () => {
  await svc.stop();
  svc.removeDataDir();
  await site.close();
});

/* The other session answers, whatever happened to the first one. */
async function otherStillServes() {
  const c = await rawClient(other.url);
  try {
    const r = await c.call('Browser.getVersion');
    assert.match(r.result.product, /Chrome/);
  } finally {
    c.close();
    await c.closed;
  }
}

/* Connects to s, retrying while its previous client is being let go. */
async function connectWhenFree(s) {
  let last;
  const c = await pollUntil(async () => {
    try {
      return await rawClient(s.url);
    } catch (e) {
      last = e;
      return undefined;
    }
  }, { deadlineMs: 30000, intervalMs: 200 });
  if (!c) throw last;
  return c;
}

test('each filtered method is refused with a CDP error that names its rule, and recorded', async () => {
  const c = await connectWhenFree(main);
  try {
    const ctxs = await c.call('Target.getBrowserContexts');
    assert.ok(ctxs.result, JSON.stringify(ctxs));
    const cases = [
      ['Browser.close', {}, 'browser-lifecycle'],
      ['Browser.crash', {}, 'browser-lifecycle'],
      ['SystemInfo.getInfo', {}, 'domain-allowlist'],
      ['Tethering.bind', { port: 9222 }, 'domain-allowlist'],
      ['Tracing.start', {}, 'domain-allowlist'],
      ['Target.sendMessageToTarget', { message: '{}', sessionId: 'x' }, 'nested-messages'],
      ['Target.exposeDevToolsProtocol', { targetId: 'x' }, 'nested-messages'],
      ['Target.createBrowserContext', { proxyServer: 'http://203.0.113.1:8080' }, 'network-path'],
      ['Network.loadNetworkResource', { url: 'http://example.com/', options: {} }, 'network-path'],
      ['Target.createTarget', { url: 'file:///etc/passwd' }, 'url-scheme'],
      ['Target.createTarget', { url: 'about:blank', browserContextId: 'F00D' }, 'contexts'],
      ['Page.setDownloadBehavior', { behavior: 'allow', downloadPath: '/tmp' }, 'downloads'],
      ['Storage.getCookies', { browserContextId: 'F00D' }, 'storage-contexts'],
      ['Extensions.loadUnpacked', { path: '/tmp' }, 'domain-allowlist'],
    ];
    for (const [method, params, rule] of cases) {
      const r = await c.call(method, params);
      assert.ok(r.error, `${method} must be refused: ${JSON.stringify(r)}`);
      assert.equal(r.error.code, -32000);
      assert.match(r.error.message, new RegExp(`glassbox refused ${method.replace('.', '\\.')} \\(rule ${rule}\\)`));
    }
    // the session's own context cannot be disposed of
    for (const id of ctxs.result.browserContextIds) {
      const r = await c.call('Target.disposeBrowserContext', { browserContextId: id });
      assert.match(r.error.message, /rule contexts/);
    }
    // and the browser is still there, answering what is relayed
    const v = await c.call('Browser.getVersion');
    assert.match(v.result.product, /Chrome/);
  } finally {
    c.close();
    await c.closed;
  }
  const refused = await waitRecord(svc, 'a', (r) => r.kind === 'cdp_refused' && r.body.method === 'Tracing.start', 'of the refused Tracing.start');
  assert.equal(refused.body.rule, 'domain-allowlist');
  assert.ok(records(svc, 'a', 'cdp_refused').some((r) => r.body.method === 'Browser.close' && r.body.rule === 'browser-lifecycle'));
});

test('malformed messages get CDP errors and the connection keeps serving', async () => {
  const c = await connectWhenFree(main);
  try {
    const errs = [];
    const got = new Promise((res) =>
      c.ws.on('message', (d) => {
        const m = JSON.parse(String(d));
        if (m.error && m.id === undefined) errs.push(m);
        if (errs.length === 2) res();
      }),
    );
    c.send('{"id": 1, "method": ');
    c.send('[1, 2, 3]');
    await got;
    assert.equal(errs[0].error.code, -32700);
    assert.match(errs[0].error.message, /not a JSON object/);
    const big = await new Promise((res) => {
      c.ws.on('message', (d) => {
        const m = JSON.parse(String(d));
        if (m.id === 2000000000) res(m);
      });
      c.send({ id: 2000000000, method: 'Browser.getVersion' });
    });
    assert.match(big.error.message, /"id" must be a whole number from 0 to 999999999/);
    const r = await c.call('Browser.getVersion', 'not an object');
    assert.equal(r.error.code, -32602);
    const ok = await c.call('Browser.getVersion');
    assert.match(ok.result.product, /Chrome/);
  } finally {
    c.close();
    await c.closed;
  }
});

test('a frame over the ceiling closes that client only (1009); other sessions keep serving', async () => {
  const c = await connectWhenFree(main);
  const huge = JSON.stringify({ id: 1, method: 'Runtime.evaluate', params: { expression: 'x'.repeat(20 << 20) } });
  c.send(huge);
  const closed = await c.closed;
  assert.equal(closed.code, 1009);
  await otherStillServes();
});

test('10k pending calls are all answered, in back-pressure, while another session serves', async () => {
  const c = await connectWhenFree(main);
  try {
    const calls = [];
    for (let i = 0; i < 10000; i++) calls.push(c.call('Browser.getVersion'));
    await otherStillServes();
    const replies = await Promise.all(calls);
    assert.equal(replies.length, 10000);
    assert.ok(replies.every((r) => r.result && /Chrome/.test(r.result.product)), 'every call got its own answer');
  } finally {
    c.close();
    await c.closed;
  }
});

test('a client that goes away mid-call leaves the session usable for the next one', async () => {
  const c = await connectWhenFree(main);
  const t = await c.call('Target.createTarget', { url: 'about:blank' });
  assert.ok(t.result.targetId, JSON.stringify(t));
  const a = await c.call('Target.attachToTarget', { targetId: t.result.targetId, flatten: true });
  c.send({ id: 9999, method: 'Runtime.evaluate', params: { expression: 'new Promise(r => setTimeout(r, 3000))', awaitPromise: true }, sessionId: a.result.sessionId });
  c.ws.terminate();
  await c.closed;
  const next = await connectWhenFree(main);
  try {
    const v = await next.call('Browser.getVersion');
    assert.match(v.result.product, /Chrome/);
    // the late reply to the gone client's call is not handed to the new one
    await new Promise((res) => setTimeout(res, 3500));
    assert.equal(next.others.filter((m) => m.id === 9999).length, 0);
  } finally {
    next.close();
    await next.closed;
  }
  await otherStillServes();
});

test('tenants find only their own sessions: another tenant gets the 404 of an unknown id', async () => {
  const asB = await refusedUpgrade(`${main.wsEndpoint}?token=${svc.tokens.b}`);
  const unknown = await refusedUpgrade(`${baseOf(svc).replace('http:', 'ws:')}/cdp/${crypto.randomBytes(32).toString('hex')}?token=${svc.tokens.a}`);
  assert.equal(asB.status, 404);
  assert.deepEqual(asB, unknown);
  const bearer = await refusedUpgrade(main.wsEndpoint, { authorization: `Bearer ${svc.tokens.b}` });
  assert.deepEqual(bearer, unknown);
  const del = await fetch(`${baseOf(svc)}/sessions/${main.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${svc.tokens.b}` } });
  assert.equal(del.status, 404);
  assert.equal((await refusedUpgrade(main.wsEndpoint)).status, 401, 'no token');
  assert.equal((await refusedUpgrade(`${main.wsEndpoint}?token=wrong`)).status, 401, 'a wrong token');
  // cdp defaults to deny: tenant c's policy does not mention it
  const denied = await postSession(svc, 'c');
  assert.equal(denied.status, 403);
  assert.match(denied.json.error, /"cdp": "allow"/);
});

test('input at an element the risk rules hold is refused (cdp.gates), the rest goes through', async () => {
  site.reset();
  const browser = await chromium.connectOverCDP(main.url, { timeout: 120000 }).catch(async () => {
    await new Promise((r) => setTimeout(r, 2000));
    return chromium.connectOverCDP(main.url, { timeout: 120000 });
  });
  try {
    const page = browser.contexts()[0].pages()[0] || (await browser.contexts()[0].newPage());
    await page.goto(site.url + '/gates/orders.html');
    // Playwright's click() retries a refused input until its timeout; the
    // mouse shows the relay's error itself
    await assert.rejects(page.click('#delete-all', { timeout: 5000 }), /Timeout/);
    const box = await page.locator('#delete-all').boundingBox();
    await assert.rejects(page.mouse.click(box.x + box.width / 2, box.y + box.height / 2), /rule cdp\.gates, risk rule destructive-click/);
    await page.fill('#note', 'kept');
    await page.click('#save');
    await page.waitForFunction(() => document.querySelector('#status').textContent === 'Saved kept', null, { timeout: 60000 });
  } finally {
    await browser.close();
  }
  assert.equal(site.hits().requests['POST /orders/delete'] || 0, 0, 'the held click never reached the page');
  const rec = await waitRecord(svc, 'a', (r) => r.kind === 'cdp_refused' && r.body.rule === 'destructive-click', 'of the gated click');
  assert.equal(rec.body.element.name, 'Delete all orders');
});

test('a release after a navigation is probed again: the press on the page before does not cover it', async () => {
  site.reset();
  const browser = await chromium.connectOverCDP(main.url, { timeout: 120000 });
  try {
    const page = browser.contexts()[0].pages()[0] || (await browser.contexts()[0].newPage());
    await page.goto(site.url + '/gates/swap.html');
    await page.mouse.move(140, 44);
    await page.mouse.down(); // on "Save": let through
    await page.goto(site.url + '/gates/swap.html?delete');
    // the same point is "Delete all orders" now
    await assert.rejects(page.mouse.up(), /rule cdp\.gates, risk rule destructive-click/);
  } finally {
    await browser.close();
  }
  assert.equal(site.hits().requests['POST /orders/delete'] || 0, 0, 'the held release never reached the page');
});

test('with cdp.gates "off" the same click goes through', async () => {
  site.reset();
  const s = await newSession(svc, 'b');
  const browser = await chromium.connectOverCDP(s.url, { timeout: 120000 });
  try {
    const page = browser.contexts()[0].pages()[0] || (await browser.contexts()[0].newPage());
    await page.goto(site.url + '/gates/orders.html');
    await page.click('#delete-all');
    await pollUntil(() => site.hits().requests['POST /orders/delete'] === 1, { deadlineMs: 30000 });
  } finally {
    await browser.close();
  }
  assert.equal(site.hits().requests['POST /orders/delete'], 1);
});

test('an MCP session offers its endpoint with browser_session {"action": "cdp"}', async () => {
  const transport = new StreamableHTTPClientTransport(new URL(svc.url), { requestInit: { headers: { Authorization: `Bearer ${svc.tokens.a}` } } });
  const client = new Client({ name: 'cdp-test', version: '1.0.0' });
  await client.connect(transport);
  try {
    const r = await client.callTool({ name: 'browser_session', arguments: { action: 'cdp' } });
    assert.ok(!r.isError, JSON.stringify(r));
    const ws = r.structuredContent.wsEndpoint;
    assert.equal(ws, `${baseOf(svc).replace('http:', 'ws:')}/cdp/${transport.sessionId}`);
    const browser = await chromium.connectOverCDP(ws, { headers: { Authorization: `Bearer ${svc.tokens.a}` }, timeout: 120000 });
    try {
      const page = browser.contexts()[0].pages()[0];
      await page.goto(site.url + '/index.html');
      // the agent's tools see the page the CDP client opened: one browser
      const snap = await client.callTool({ name: 'browser_snapshot', arguments: {} });
      assert.match(JSON.stringify(snap.content), new RegExp(site.url.replace(/[.]/g, '\\.') + '/index\\.html'));
    } finally {
      await browser.close();
    }
  } finally {
    await client.close();
  }
  const tc = new StreamableHTTPClientTransport(new URL(svc.url), { requestInit: { headers: { Authorization: `Bearer ${svc.tokens.c}` } } });
  const cc = new Client({ name: 'cdp-test-c', version: '1.0.0' });
  await cc.connect(tc);
  try {
    const r = await cc.callTool({ name: 'browser_session', arguments: { action: 'cdp' } });
    assert.ok(r.isError);
    assert.match(JSON.stringify(r.content), /does not offer a CDP endpoint/);
  } finally {
    await cc.close();
  }
});

/* Writes bytes (a string or chunks written one after another) to the
 * endpoint's host over a plain socket; resolves with what came back once
 * the server closes, or after ms. */
function rawSocket(url, chunks, { endAfter = true, ms = 3000 } = {}) {
  const u = new URL(url);
  return new Promise((resolve) => {
    let got = '';
    const s = net.connect(Number(u.port), u.hostname, () => {
      for (const c of [].concat(chunks)) s.write(c);
      if (endAfter) s.end();
    });
    const done = () => { s.destroy(); resolve(got); };
    s.on('data', (d) => { got += d.toString('latin1'); });
    s.on('close', done);
    s.on('error', done);
    setTimeout(done, ms);
  });
}

/* An upgrade request for url's /cdp/<id> path. */
function upgradeRequest(url, { key = crypto.randomBytes(16).toString('base64') } = {}) {
  const u = new URL(url);
  return `GET ${u.pathname}${u.search} HTTP/1.1\r\nHost: ${u.host}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
    (key ? `Sec-WebSocket-Key: ${key}\r\n` : '') + 'Sec-WebSocket-Version: 13\r\n\r\n';
}

test('hostile sockets on the upgrade: half a request, no key, two at once, bytes that are not frames, a close mid-upgrade', async () => {
  const req = upgradeRequest(main.url);
  // half a request, then the client closes
  await rawSocket(main.url, req.slice(0, 40));
  // no Sec-WebSocket-Key: refused, never upgraded
  const nokey = await rawSocket(main.url, upgradeRequest(main.url, { key: null }));
  assert.doesNotMatch(nokey, /^HTTP\/1\.1 101/, nokey);
  // two upgrades in one write: at most one relay; the second never gets a second 101
  const two = await rawSocket(main.url, req + upgradeRequest(main.url), { endAfter: false, ms: 2000 });
  assert.ok((two.match(/HTTP\/1\.1 101/g) || []).length <= 1, two);
  // an upgrade then bytes that are not a websocket frame
  await rawSocket(main.url, [req, Buffer.from('GET / HTTP/1.1\r\n\r\n\x00\xff\x13garbage')], { ms: 2000 });
  // an upgrade whose client closes before reading the 101
  await rawSocket(main.url, req);
  // the session takes a proper client again, and the other one kept serving
  const c = await connectWhenFree(main);
  try {
    const v = await c.call('Browser.getVersion');
    assert.match(v.result.product, /Chrome/);
  } finally {
    c.close();
    await c.closed;
  }
  await otherStillServes();
});
