/*
 * Egress layer 4 drills: the browser in a network namespace of its own,
 * with nothing in it but loopback and a veth pair whose ends are both
 * inside (docs/egress.md).
 *
 *   1. Layers 1-3 off, netns on: the browser is in another namespace than
 *      glassbox, that namespace has only lo and the pair and no route
 *      off it (pages see navigator.onLine true), and neither a
 *      server on the host's loopback nor one on the host's own non-loopback
 *      address (traffic to it stays on this machine) sees a connection,
 *      whatever the page tries. The control run (every layer off, netns
 *      too) reaches both, so the drill can fail.
 *   2. Every layer on: the DevTools port listens on the browser's loopback
 *      only (connecting from this process, in glassbox's namespace, fails),
 *      a page probing it gets nothing, and the allowed site loads through
 *      the proxy.
 *
 * Needs root (glassbox makes the namespaces); skipped elsewhere, where
 * glassbox runs with layers 1-3 and says so at start.
 */
import { describe, test, before, after } from 'node:test';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import { execFileSync } from 'node:child_process';
import { assert, sc, dump, chromiumPids, pollUntil, profileDirs } from '../e2e/lib.mjs';
import { useDrill, drillLog, runProbe, refusalsFor } from './egress-drills.mjs';

function netnsSkipReason() {
  if (process.getuid && process.getuid() !== 0) return 'glassbox makes network namespaces as root only';
  try {
    execFileSync('unshare', ['-n', 'true'], { stdio: 'ignore' });
  } catch {
    return 'this machine does not permit network namespaces';
  }
  return false;
}
const SKIP = netnsSkipReason();

const nsOf = (pid) => fs.readlinkSync(`/proc/${pid}/ns/net`);

/* The network interfaces and the routes seen from inside pid's namespace. */
function netView(pid) {
  const dev = fs
    .readFileSync(`/proc/${pid}/net/dev`, 'utf8')
    .split('\n')
    .slice(2)
    .map((l) => l.split(':')[0].trim())
    .filter(Boolean);
  const routes = fs.readFileSync(`/proc/${pid}/net/route`, 'utf8').trim().split('\n').slice(1);
  const routes6 = fs
    .readFileSync(`/proc/${pid}/net/ipv6_route`, 'utf8')
    .trim()
    .split('\n')
    .filter((l) => l && !/ lo$/.test(l.trim()));
  return { dev, routes, routes6 };
}

/* A TCP server on every address of this namespace that counts connections. */
async function countingServer() {
  let n = 0;
  const socks = new Set();
  const srv = net.createServer((sock) => {
    n += 1;
    socks.add(sock);
    sock.on('close', () => socks.delete(sock));
    sock.on('error', () => {});
    sock.end('HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nhi');
  });
  await new Promise((r) => srv.listen(0, '0.0.0.0', r));
  return {
    port: srv.address().port,
    count: () => n,
    close: () => {
      for (const s of socks) s.destroy();
      srv.close();
    },
  };
}

/* This machine's own non-loopback IPv4 address, if it has one. */
function hostAddress() {
  for (const list of Object.values(os.networkInterfaces()))
    for (const a of list || []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return null;
}

/* What the page tries towards base: top-level navigations (no Private
 * Network Access check applies to them) and, from about:blank, fetch, an
 * image and a WebSocket. */
async function probeAll(log, bases) {
  for (const base of bases) await log.call('browser_navigate', { url: `${base}/leak/netns-navigate` });
  await log.call('browser_navigate', { url: 'about:blank' });
  await log.call('browser_evaluate', {
    function: `async () => {
      const bases = ${JSON.stringify(bases)};
      const tries = [];
      for (const b of bases) {
        tries.push(fetch(b + '/leak/netns-fetch', { mode: 'no-cors' }).then(() => 'loaded', () => 'error'));
        tries.push(new Promise((r) => { const i = new Image(); i.onload = () => r('loaded'); i.onerror = () => r('error'); i.src = b + '/leak/netns-img'; }));
        tries.push(new Promise((r) => { try { const w = new WebSocket(b.replace('http', 'ws') + '/leak/netns-ws'); w.onopen = () => r('open'); w.onerror = () => r('error'); } catch (e) { r('error'); } }));
      }
      return Promise.race([Promise.all(tries), new Promise((r) => setTimeout(() => r('timeout'), 5000))]);
    }`,
  });
}

function browserPids(run) {
  const pids = chromiumPids(run.gb.dataDir);
  assert.ok(pids.length > 0, 'the browser runs');
  return pids;
}

describe('layer 4: layers 1-3 off, the browser in its own network namespace', { skip: SKIP }, () => {
  const run = useDrill({ layers: { tool: false, fetch: false, proxy: false, netns: true } });
  let srv;
  const host = hostAddress();
  before(async () => {
    srv = await countingServer();
  });
  after(async () => {
    if (srv) srv.close();
  });

  test('the browser runs in a namespace of its own with only loopback and no route', async () => {
    const log = drillLog(run);
    await log.call('browser_navigate', { url: 'about:blank' });
    const mine = nsOf(process.pid);
    assert.equal(nsOf(run.gb.pid), mine, 'glassbox stays in the namespace it was started in');
    for (const pid of browserPids(run)) {
      assert.notEqual(nsOf(pid), mine, `browser process ${pid} is in another network namespace`);
      const v = netView(pid);
      // loopback, and a veth pair whose two ends are both in this
      // namespace (a link that leads nowhere, so that pages are online)
      assert.deepEqual(v.dev.sort(), ['gb0', 'gb1', 'lo'], `only loopback and the pair in the browser's namespace: ${JSON.stringify(v)}`);
      assert.deepEqual(v.routes, [], `no IPv4 route: ${JSON.stringify(v)}`);
      // the pair's IPv6 link-local and multicast routes stay on the pair
      const offPair = v.routes6.filter((l) => !/ gb[01]$/.test(l.trim()) || !/^(fe80|ff00)/.test(l));
      assert.deepEqual(offPair, [], `no IPv6 route but loopback's and the pair's link-local ones: ${JSON.stringify(v)}`);
    }
    // Chromium counts the namespace as online (it would say offline with
    // only loopback), though nothing leaves it
    assert.equal(sc(await log.call('browser_evaluate', { function: '() => navigator.onLine' })).result, true);
  });

  test('a page reaches neither a server on the host\'s loopback nor the host\'s own address', async () => {
    const log = drillLog(run);
    const bases = [`http://127.0.0.1:${srv.port}`, `http://127.0.0.1:${run.M}`, `http://shop.test:${run.M}`];
    if (host) bases.push(`http://${host}:${srv.port}`, `http://${host}:${run.M}`);
    run.allowed.reset();
    await probeAll(log, bases);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(srv.count(), 0, 'the counting server saw no connection');
    assert.equal(run.allowed.connections(), 0, `the fixture server saw no connection: ${JSON.stringify(run.allowed.hits())}`);
    assert.equal(run.denied.connections(), 0);
    const href = sc(await log.call('browser_evaluate', { function: '() => location.href' })).result;
    assert.equal(href, 'about:blank');
  });
});

describe('layer 4 control: every layer off, netns too, the same probes get through', { skip: SKIP }, () => {
  const run = useDrill({ layers: { tool: false, fetch: false, proxy: false, netns: false } });
  let srv;
  const host = hostAddress();
  before(async () => {
    srv = await countingServer();
  });
  after(async () => {
    if (srv) srv.close();
  });

  test('without the namespace the page reaches the host\'s loopback and address', async () => {
    const log = drillLog(run);
    await log.call('browser_navigate', { url: 'about:blank' });
    for (const pid of browserPids(run)) assert.equal(nsOf(pid), nsOf(process.pid), 'the browser shares our namespace');
    const bases = [`http://127.0.0.1:${srv.port}`];
    if (host) bases.push(`http://${host}:${srv.port}`);
    await probeAll(log, bases);
    assert.ok(await pollUntil(() => srv.count() >= bases.length, { deadlineMs: 5000 }), `connections: ${srv.count()}`);
  });
});

describe('layer 4 with every layer on: the DevTools port', { skip: SKIP }, () => {
  const run = useDrill({ layers: { tool: true, fetch: true, proxy: true, netns: true }, policyFile: 'egress-devtools.json', allowMain: false });
  let dt = null;

  test('the allowed site loads through the proxy, from inside the namespace', async () => {
    run.allowed.reset();
    const log = drillLog(run);
    const r = await log.call('browser_navigate', { url: run.local('/egress/links.html') });
    assert.ok(!r.isError, dump(r));
    assert.ok(run.allowed.hits().paths['/egress/links.html'] >= 1, JSON.stringify(run.allowed.hits()));
    for (const pid of browserPids(run)) assert.notEqual(nsOf(pid), nsOf(process.pid));
    const f = profileDirs(run.gb.dataDir)
      .map((dir) => `${dir}/DevToolsActivePort`)
      .find((p) => fs.existsSync(p));
    const [port, p] = fs.readFileSync(f, 'utf8').split('\n');
    dt = { port: Number(port), path: p };
    assert.ok(dt.port > 0, JSON.stringify(dt));
  });

  test('the DevTools port listens in the browser\'s namespace only: connecting from glassbox\'s fails', async () => {
    const hex = dt.port.toString(16).toUpperCase().padStart(4, '0');
    const listening = (pid) =>
      fs
        .readFileSync(`/proc/${pid}/net/tcp`, 'utf8')
        .split('\n')
        .some((l) => {
          const f = l.trim().split(/\s+/);
          return f[1] === `0100007F:${hex}` && f[3] === '0A';
        });
    assert.ok(browserPids(run).some(listening), 'the browser listens on 127.0.0.1:<devtools> in its namespace');
    assert.ok(!listening(process.pid), 'nothing listens on that port in ours');
    const outcome = await new Promise((resolve) => {
      const sock = net.connect({ host: '127.0.0.1', port: dt.port });
      let data = '';
      sock.on('connect', () => sock.write(`GET /json/version HTTP/1.1\r\nHost: 127.0.0.1:${dt.port}\r\nConnection: close\r\n\r\n`));
      sock.on('data', (d) => (data += d));
      sock.on('end', () => resolve(`answered: ${data}`));
      sock.on('error', (e) => resolve(e.code));
      setTimeout(() => { sock.destroy(); resolve(`timeout: ${data}`); }, 3000);
    });
    assert.equal(outcome, 'ECONNREFUSED', 'the DevTools port is not reachable from glassbox\'s namespace');
  });

  test('a page probing the DevTools port gets nothing', async () => {
    const log = drillLog(run);
    const res = await runProbe(run, log, {
      origin: run.local(''),
      params: { chs: 'fetch,websocket', base: `http://127.0.0.1:${dt.port}`, path: '/json/version', wspath: dt.path },
    });
    await log.drainUntil((l) => refusalsFor(l, { pathPart: `:${dt.port}/json/version` }).length > 0 && refusalsFor(l, { pathPart: dt.path, tunnel: `127.0.0.1:${dt.port}` }).length > 0);
    assert.notEqual(res.fetch.denied, 'loaded', JSON.stringify(res));
    assert.notEqual(res.websocket.denied, 'message: hello', JSON.stringify(res));
    for (const b of [...refusalsFor(log, { pathPart: `:${dt.port}/json/version` }), ...refusalsFor(log, { pathPart: dt.path, tunnel: `127.0.0.1:${dt.port}` })])
      assert.equal(b.rule, 'devtools-port', JSON.stringify(b));
    assert.equal(res.fetch.allowed, 'loaded', `the allowed fetch on the same page loads: ${JSON.stringify(res)}`);
  });
});
