/*
 * A network fuzzer for glassbox serve's listeners: bounded random clients
 * (by count and by time) send mutated HTTP requests through real sockets
 * into the real listener path (GLASSBOX_BIN, the ASan build in
 * `make test-http-fuzz`). The service must stay alive, keep answering a
 * valid round trip, stop cleanly, and its sanitizers must report nothing.
 *
 *   FUZZ_CASES=N      connections (default 3000)
 *   FUZZ_SECONDS=S    a ceiling on the whole run (default 90)
 *   FUZZ_SEED=N       the random seed (printed; default: the time)
 */
import { test, before, after } from 'node:test';
import net from 'node:net';
import { assert } from '../e2e/lib.mjs';
import { startServe, INIT } from '../integration/serve_helpers.mjs';

const CASES = Number(process.env.FUZZ_CASES || 3000);
const SECONDS = Number(process.env.FUZZ_SECONDS || 90);
const SEED = Number(process.env.FUZZ_SEED || Date.now() % 1e9);
const PARALLEL = 16;
let svc;
let ports;

/* mulberry32: a small seeded generator, so that a failure can be replayed. */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(SEED);
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const int = (n) => Math.floor(rand() * n);

before(async () => {
  svc = await startServe({ tenants: { t: {}, check: {} }, prelaunch: false, admin: true, limits: { http_timeout_s: 2, max_body_bytes: 65536 } });
  ports = [Number(new URL(svc.url).port), Number(new URL(svc.adminUrl).port)];
  console.log(`http fuzz: seed ${SEED}, ${CASES} cases, at most ${SECONDS} s`);
});

after(async () => {
  if (!svc) return;
  const r = await svc.stop('SIGTERM');
  const err = svc.stderr();
  svc.removeDataDir();
  assert.equal(r.code, 0, `glassbox serve exited with ${JSON.stringify(r)}:\n${err.slice(-4000)}`);
  assert.doesNotMatch(err, /AddressSanitizer|LeakSanitizer|runtime error:|ThreadSanitizer/, err.slice(-4000));
});

/* A valid request to start from: one of the shapes a client sends. */
function seedRequest(session) {
  const token = svc.tokens.t;
  const body = pick([JSON.stringify(INIT), '{"jsonrpc":"2.0","id":7,"method":"ping"}', '{"jsonrpc":"2.0","method":"notifications/initialized"}', '[]', '{']);
  const heads = [
    `POST /mcp HTTP/1.1`,
    `Host: 127.0.0.1`,
    `Authorization: Bearer ${pick([token, token, 'wrong', ''])}`,
    'Content-Type: application/json',
    'Accept: application/json, text/event-stream',
  ];
  if (session && rand() < 0.5) heads.push(`Mcp-Session-Id: ${session}`);
  const chunked = rand() < 0.3;
  if (chunked) heads.push('Transfer-Encoding: chunked');
  else heads.push(`Content-Length: ${Buffer.byteLength(body)}`);
  if (rand() < 0.1) heads.push('Expect: 100-continue');
  let payload = body;
  if (chunked) {
    const cut = int(body.length + 1);
    payload = [body.slice(0, cut), body.slice(cut)].filter((p) => p).map((p) => `${Buffer.byteLength(p).toString(16)}\r\n${p}\r\n`).join('') + '0\r\n\r\n';
  }
  return Buffer.from(heads.join('\r\n') + '\r\n\r\n' + payload);
}

const JUNK = ['\r\n', '\n', ' ', ':', '\0', 'Content-Length: 99999999999999999999\r\n', 'Transfer-Encoding: chunked\r\n', 'ffffffffffffffff\r\n', 'GET / HTTP/1.1\r\n', '%00', 'Host: \r\n', 'X'.repeat(5000), '\xff\xfe'];

/* One mutation of buf: flips, cuts, inserts, duplicates, splices. */
function mutate(buf) {
  let b = Buffer.from(buf);
  const n = 1 + int(4);
  for (let i = 0; i < n; i++) {
    switch (int(7)) {
      case 0: // flip bytes
        for (let j = 0; j < 1 + int(8) && b.length; j++) b[int(b.length)] = int(256);
        break;
      case 1: // cut
        b = b.subarray(0, int(b.length + 1));
        break;
      case 2: { // insert junk
        const at = int(b.length + 1);
        b = Buffer.concat([b.subarray(0, at), Buffer.from(pick(JUNK), 'latin1'), b.subarray(at)]);
        break;
      }
      case 3: { // duplicate a range
        const at = int(b.length + 1);
        const len = int(200);
        b = Buffer.concat([b.subarray(0, at), b.subarray(at, at + len), b.subarray(at)]);
        break;
      }
      case 4: // two requests in one write
        b = Buffer.concat([b, seedRequest()]);
        break;
      case 5: // random bytes
        b = Buffer.concat([b, Buffer.from(Array.from({ length: int(300) }, () => int(256)))]);
        break;
      default: // nothing: a valid request now and then
        break;
    }
  }
  return b;
}

/* Sends buf in random pieces and reads for a short while. */
function send(buf, port) {
  return new Promise((resolve) => {
    const sock = net.connect({ host: '127.0.0.1', port });
    let timer;
    const done = () => {
      clearTimeout(timer);
      sock.destroy();
      resolve();
    };
    sock.on('error', done);
    sock.on('end', done);
    sock.on('data', () => {});
    sock.on('connect', async () => {
      let off = 0;
      while (off < buf.length && !sock.destroyed) {
        const len = 1 + int(Math.min(buf.length - off, rand() < 0.5 ? 16 : 4096));
        sock.write(buf.subarray(off, off + len));
        off += len;
        if (rand() < 0.1) await new Promise((r) => setTimeout(r, int(30)));
      }
      if (rand() < 0.2) sock.end(); // half-close
      timer = setTimeout(done, 100 + int(400));
    });
  });
}

/* A valid round trip of another tenant: initialize, ping, DELETE. */
async function roundTrip() {
  const init = await svc.rawPost('check', INIT);
  assert.equal(init.status, 200, init.text);
  const id = init.headers.get('mcp-session-id');
  const ping = await svc.rawPost('check', { jsonrpc: '2.0', id: 2, method: 'ping' }, { 'mcp-session-id': id });
  assert.equal(ping.status, 200, ping.text);
  const del = await fetch(svc.url, { method: 'DELETE', headers: { authorization: `Bearer ${svc.tokens.check}`, 'mcp-session-id': id } });
  assert.equal(del.status, 200);
  return id;
}

test('random clients on both listeners: the service stays up and keeps serving', async () => {
  const deadline = Date.now() + SECONDS * 1000;
  const init = await svc.rawPost('t', INIT);
  const session = init.headers.get('mcp-session-id');
  let sent = 0;
  const worker = async () => {
    while (sent < CASES && Date.now() < deadline) {
      const n = ++sent;
      await send(mutate(seedRequest(session)), pick(ports));
      if (n % 500 === 0) {
        assert.equal(svc.proc.exitCode, null, `glassbox serve died (seed ${SEED}, case ${n}):\n${svc.stderr().slice(-3000)}`);
        await roundTrip();
      }
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, worker));
  assert.equal(svc.proc.exitCode, null, `glassbox serve died (seed ${SEED}):\n${svc.stderr().slice(-3000)}`);
  await roundTrip();
  const h = await svc.admin('GET', '/healthz', { token: null });
  assert.equal(h.status, 200);
  console.log(`http fuzz: ${sent} cases sent`);
});
