/*
 * glassbox serve faces hostile clients on a real socket: half requests,
 * garbage, smuggling shapes, pipelining, chunked bodies, slowloris, clients
 * that never read. After each shape another tenant still initializes,
 * calls a tool and DELETEs, /healthz answers, and the process is alive.
 * Every loop here is bounded in count and time, and talks to loopback only.
 */
import { test, before, after } from 'node:test';
import net from 'node:net';
import fs from 'node:fs';
import { assert, ok, sc, pollUntil } from '../e2e/lib.mjs';
import { startServe, INIT } from './serve_helpers.mjs';

const TIMEOUT_S = 5; /* limits.http_timeout_s of this service */
const PER_PEER = 40; /* limits.max_connections_per_peer */
let svc;
let port;
let adminPort;

before(async () => {
  svc = await startServe({
    tenants: { good: {}, bad: { max_sessions: 16 } },
    limits: { http_timeout_s: TIMEOUT_S, max_connections_per_peer: PER_PEER, max_body_bytes: 65536 },
    prelaunch: false,
    admin: true,
  });
  port = Number(new URL(svc.url).port);
  adminPort = Number(new URL(svc.adminUrl).port);
});

after(async () => {
  if (!svc) return;
  const r = await svc.stop('SIGTERM');
  assert.equal(r.code, 0, `glassbox serve exited with ${JSON.stringify(r)}:\n${svc.stderr().slice(-3000)}`);
  assert.deepEqual(svc.chromiums(), [], 'no Chromium may be left after the stop');
  svc.removeDataDir();
});

/*
 * Opens a socket (from localAddress), writes each piece of parts (a pause
 * of pauseMs between them), and reads until the server closes or readMs
 * passes. Returns {data, closedByServer, ms}.
 */
function raw(parts, { readMs = 3000, localAddress, pauseMs = 0, toPort = port, onData } = {}) {
  return new Promise((resolve) => {
    const started = Date.now();
    const sock = net.connect({ host: '127.0.0.1', port: toPort, localAddress });
    const chunks = [];
    let closedByServer = false;
    let timer;
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ data: Buffer.concat(chunks).toString('latin1'), closedByServer, ms: Date.now() - started });
    };
    sock.on('data', (d) => {
      chunks.push(d);
      if (onData) onData(Buffer.concat(chunks).toString('latin1'), sock);
    });
    sock.on('end', () => {
      closedByServer = true;
      done();
    });
    sock.on('error', () => {
      closedByServer = true;
      done();
    });
    sock.on('connect', async () => {
      for (const p of [].concat(parts)) {
        if (sock.destroyed) break;
        sock.write(p);
        if (pauseMs) await new Promise((r) => setTimeout(r, pauseMs));
      }
      timer = setTimeout(done, readMs);
    });
  });
}

const statuses = (data) => [...data.matchAll(/HTTP\/1\.[01] (\d{3}) /g)].map((m) => Number(m[1]));

function post(body, { session, extra = '', token = svc.tokens.bad, version = '1.1', length = true } = {}) {
  const b = Buffer.from(body);
  return Buffer.concat([
    Buffer.from(
      `POST /mcp HTTP/${version}\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${token}\r\n` +
        'Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n' +
        (session ? `Mcp-Session-Id: ${session}\r\n` : '') +
        extra +
        (length ? `Content-Length: ${b.length}\r\n` : '') +
        '\r\n',
    ),
    b,
  ]);
}

const ping = (id) => JSON.stringify({ jsonrpc: '2.0', id, method: 'ping' });

/* A session of tenant bad, opened over fetch: its id. */
async function badSession() {
  const r = await svc.rawPost('bad', INIT);
  assert.equal(r.status, 200, r.text);
  return r.headers.get('mcp-session-id');
}

/* What must hold after every shape: another tenant's whole round trip,
 * /healthz, the process. */
async function stillServing(what) {
  assert.equal(svc.proc.exitCode, null, `glassbox serve died after ${what}:\n${svc.stderr().slice(-2000)}`);
  const c = await svc.connect('good');
  const r = await ok(c.client, 'browser_evaluate', { function: '() => 6 * 7' });
  assert.equal(sc(r).result, 42, `a tool call after ${what}`);
  await c.transport.terminateSession();
  await c.client.close();
  const h = await svc.admin('GET', '/healthz', { token: null });
  assert.equal(h.status, 200, `/healthz after ${what}`);
  assert.equal(h.json.status, 'ok');
}

test('connect and close, and a connection that never sends a byte, on both listeners', async () => {
  for (const toPort of [port, adminPort]) {
    for (let i = 0; i < 20; i++) {
      await new Promise((res) => {
        const s = net.connect({ host: '127.0.0.1', port: toPort }, () => {
          s.destroy();
          res();
        });
        s.on('error', res);
      });
    }
    const idle = await raw([], { readMs: (TIMEOUT_S + 10) * 1000, toPort });
    assert.ok(idle.closedByServer, 'a connection that sends nothing is closed by the server after its timeout');
    assert.equal(idle.data, '', 'and gets no answer: it asked nothing');
  }
  await stillServing('connect/close and half-open connections');
});

test('an oversized request line gets 414, oversized headers 431, garbage 400 or a close', async () => {
  const longUrl = await raw(`GET /${'a'.repeat(70000)} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
  assert.deepEqual(statuses(longUrl.data), [414], longUrl.data.slice(0, 200));
  const longHeader = await raw(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(70000)}\r\n\r\n`);
  assert.deepEqual(statuses(longHeader.data), [431], longHeader.data.slice(0, 200));
  const many = await raw(`GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n${Array.from({ length: 6000 }, (_, i) => `X-${i}: v\r\n`).join('')}\r\n`);
  assert.deepEqual(statuses(many.data), [431]);
  const adminLong = await raw(`GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${'b'.repeat(70000)}\r\n\r\n`, { toPort: adminPort });
  assert.deepEqual(statuses(adminLong.data), [431]);
  for (const bytes of [
    'hello world\r\n\r\n',
    Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, 0xfc, 0x03, 0x03, 0x0d, 0x0a, 0x0d, 0x0a]),
    'GET /mcp HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n',
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: -5\r\n\r\n',
    'POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n',
  ]) {
    const r = await raw(bytes, { readMs: (TIMEOUT_S + 5) * 1000 });
    const st = statuses(r.data);
    assert.ok(r.closedByServer, `the server closes after garbage: ${JSON.stringify(r.data.slice(0, 120))}`);
    assert.ok(st.every((s) => s >= 400), `garbage is never answered with success: ${st}`);
  }
  await stillServing('oversized and garbage requests');
});

test('smuggling shapes: Content-Length with Transfer-Encoding, two Content-Lengths, two session ids: 400', async () => {
  const both = await raw(post(ping(1), { extra: 'Transfer-Encoding: chunked\r\n' }));
  assert.deepEqual(statuses(both.data), [400]);
  assert.match(both.data, /both Content-Length and Transfer-Encoding/);
  assert.ok(both.closedByServer, 'the connection is closed after a framing refusal');
  const two = await raw(post(ping(1), { extra: 'Content-Length: 3\r\n' }));
  assert.deepEqual(statuses(two.data), [400]);
  assert.match(two.data, /Content-Length more than once/);
  const te = await raw(post(ping(1), { extra: 'Transfer-Encoding: gzip, chunked\r\n', length: false }));
  assert.deepEqual(statuses(te.data), [400]);
  const session = await badSession();
  const twoIds = await raw(post(ping(1), { session, extra: `Mcp-Session-Id: ${session}\r\n` }));
  assert.deepEqual(statuses(twoIds.data), [400]);
  assert.match(twoIds.data, /Mcp-Session-Id more than once/);
  await stillServing('smuggling shapes');
});

test('two requests pipelined in one write are answered in order; HTTP/1.0 and Expect: 100-continue are served', async () => {
  const session = await badSession();
  const r = await raw(Buffer.concat([post(ping(11), { session }), post(ping(12), { session })]), { readMs: 2000 });
  assert.deepEqual(statuses(r.data), [200, 200], r.data);
  assert.ok(r.data.indexOf('"id":11') < r.data.indexOf('"id":12'), 'answers in the order of the requests');

  const old = await raw(post(ping(13), { session, version: '1.0' }), { readMs: 4000 });
  assert.deepEqual(statuses(old.data), [200]);
  assert.match(old.data, /"id":13/);

  const body = ping(14);
  let sentBody = false;
  const head = post(body, { session, extra: 'Expect: 100-continue\r\n' }).subarray(0, -Buffer.byteLength(body));
  const expect = await raw(head, {
    readMs: 3000,
    onData: (data, sock) => {
      if (!sentBody && /^HTTP\/1\.1 100/.test(data)) {
        sentBody = true;
        sock.write(body);
      }
    },
  });
  assert.deepEqual(statuses(expect.data), [100, 200], expect.data);
  assert.match(expect.data, /"id":14/);
  await stillServing('pipelining, HTTP/1.0 and Expect');
});

test('a chunked body is served; an unterminated one and a body that stops midway are timed out', async () => {
  const session = await badSession();
  const body = ping(21);
  const chunked = post('', { session, extra: 'Transfer-Encoding: chunked\r\n', length: false });
  const pieces = [body.slice(0, 7), body.slice(7, 20), body.slice(20)];
  const enc = pieces.map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join('') + '0\r\n\r\n';
  const r = await raw([chunked, enc], { readMs: 3000 });
  assert.deepEqual(statuses(r.data), [200], r.data);
  assert.match(r.data, /"id":21/);

  const [unterminated, midway] = await Promise.all([
    raw([chunked, `${(5).toString(16)}\r\n{"jso\r\n`], { readMs: (TIMEOUT_S + 10) * 1000 }),
    raw(post(ping(22), { session }).subarray(0, -10), { readMs: (TIMEOUT_S + 10) * 1000 }),
  ]);
  assert.ok(unterminated.closedByServer, 'an unterminated chunked body is timed out');
  assert.ok(midway.closedByServer, 'a body that stops midway is timed out');
  assert.ok(!statuses(unterminated.data).includes(200) && !statuses(midway.data).includes(200));

  const big = await raw([chunked, `${(70000).toString(16)}\r\n${'x'.repeat(70000)}\r\n0\r\n\r\n`], { readMs: 3000 });
  assert.deepEqual(statuses(big.data), [413], 'a chunked body over limits.max_body_bytes: 413');
  await stillServing('chunked bodies');
});

test('slowloris: 500 sockets that trickle headers are bounded per peer, and other clients are served meanwhile', async () => {
  const socks = [];
  let closedEarly = 0;
  for (let i = 0; i < 500; i++) {
    const s = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.2' });
    s.on('error', () => {});
    s.on('close', () => closedEarly++);
    s.on('connect', () => s.write('POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n'));
    socks.push(s);
  }
  const trickle = setInterval(() => {
    for (const s of socks) if (!s.destroyed) s.write('X-Slow: a\r\n');
  }, 1000);
  try {
    await new Promise((r) => setTimeout(r, 2000));
    // a connection that never completes its request is refused at accept
    // past twice the per-peer limit
    assert.ok(500 - closedEarly <= 2 * PER_PEER, `at most ${2 * PER_PEER} connections of one peer stay open (open: ${500 - closedEarly})`);
    await stillServing('500 slowloris sockets');
  } finally {
    clearInterval(trickle);
    for (const s of socks) s.destroy();
  }
});

test('many connections from one peer: a request past the limit gets 429, other peers are served', async () => {
  const socks = [];
  for (let i = 0; i < PER_PEER; i++) {
    const s = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.3' });
    s.on('error', () => {});
    socks.push(s);
  }
  await Promise.all(socks.map((s) => new Promise((r) => (s.readyState === 'open' ? r() : s.on('connect', r)))));
  await new Promise((r) => setTimeout(r, 300));
  const over = await raw(post(ping(41)), { localAddress: '127.0.0.3', readMs: 3000 });
  assert.deepEqual(statuses(over.data), [429], over.data.slice(0, 300));
  assert.match(over.data, /too many connections from 127\.0\.0\.3 at once \(limits\.max_connections_per_peer 40\)/);
  assert.ok(over.closedByServer);
  const adminOver = await raw('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { localAddress: '127.0.0.3', toPort: adminPort, readMs: 3000 });
  assert.deepEqual(statuses(adminOver.data), [429], 'the limit counts the connections to both listeners');
  await stillServing('a peer at its connection limit');
  for (const s of socks) s.destroy();
  // once they are gone the peer is served again
  const again = await pollUntil(async () => {
    const r = await raw('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', { localAddress: '127.0.0.3', toPort: adminPort, readMs: 1000 });
    return statuses(r.data)[0] === 200 ? r : null;
  }, { deadlineMs: 10000, intervalMs: 200 });
  assert.ok(again, 'the peer is served once its connections are closed');
});

test('a client that never reads its answers holds a bounded buffer, and nobody else waits for it', async () => {
  const rssOf = () => Number(/VmRSS:\s+(\d+)/.exec(fs.readFileSync(`/proc/${svc.pid}/status`, 'utf8'))[1]);
  const before = rssOf();
  const session = await badSession();
  const one = post(ping(31), { session });
  const sock = net.connect({ host: '127.0.0.1', port, localAddress: '127.0.0.4' });
  sock.on('error', () => {});
  await new Promise((r) => sock.on('connect', r));
  sock.pause(); // never read
  for (let i = 0; i < 40; i++) sock.write(Buffer.concat(Array.from({ length: 100 }, () => one)));
  await new Promise((r) => setTimeout(r, 1500));
  await stillServing('a client that never reads');
  const grown = rssOf() - before;
  assert.ok(grown < 64 * 1024, `the server's memory stays bounded (grew ${grown} KiB)`);
  sock.destroy();
});

test('a client that closes while its call is running: the call ends, the session and everyone else go on', async () => {
  const session = await badSession();
  await svc.rawPost('bad', { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-session-id': session });
  const call = JSON.stringify({ jsonrpc: '2.0', id: 51, method: 'tools/call', params: { name: 'browser_wait_for', arguments: { time: 2 } } });
  // the request is read whole and its call started; then the client is gone
  const gone = await raw(post(call, { session }), { readMs: 300 });
  assert.equal(gone.data, '', 'no answer yet: the call is still running');
  await stillServing('a client that left during its call');
  // the session serves its next request once the call is over
  const next = await pollUntil(async () => {
    const r = await svc.rawPost('bad', { jsonrpc: '2.0', id: 52, method: 'tools/call', params: { name: 'browser_evaluate', arguments: { function: '() => 5' } } }, { 'mcp-session-id': session });
    return r.status === 200 ? r : null;
  }, { deadlineMs: 30000, intervalMs: 250 });
  assert.ok(next, 'the session answers after its abandoned call');
  assert.match(next.text, /"result"/);
});

test('the admin listener: pipelined requests in order, smuggling refused', async () => {
  const hz = 'GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
  const rz = 'GET /readyz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n';
  const r = await raw(hz + rz, { toPort: adminPort, readMs: 1500 });
  assert.deepEqual(statuses(r.data), [200, 200]);
  assert.ok(r.data.indexOf('"status":"ok"') > 0 && r.data.endsWith('\r\n\r\nready\n'), 'healthz, then readyz');
  const both = await raw('POST /sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', { toPort: adminPort });
  assert.deepEqual(statuses(both.data), [400]);
  await stillServing('admin shapes');
});
