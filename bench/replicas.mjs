#!/usr/bin/env node
// bench/replicas.mjs: what HAProxy in front of a replica costs a tool call, and how many sessions
// one replica holds.
//
//   node bench/replicas.mjs [--calls N] [--sessions K] [--memory-mib M] [--glassbox PATH] [--out FILE]
//
// One `glassbox serve` (replica r1) and HAProxy with the shipped config (deploy/haproxy/haproxy.cfg;
// its other two servers point at closed ports and are down). Two sessions on the replica, one
// connected directly and one through HAProxy (its requests routed by Mcp-Session-Id), each having
// navigated the bench site; then N rounds (default 200) of one browser_snapshot on each, the order
// alternating per round so that both see the same machine. Reported: median and p95 of each, and
// the ratios proxied / direct. Then K sessions (default 4) through HAProxy, each having navigated:
// the memory (PSS) of their browsers and of glassbox, as MiB per session, and how many sessions fit
// in a replica of M MiB (default 2560, the StatefulSet's limit). JSON: bench/results/replicas.json.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSite } from './lib/site-server.mjs';
import { memOf, killTree } from './lib/proc.mjs';
import { summary, round } from './lib/stats.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseArgs(argv) {
  const o = { calls: 200, sessions: 4, memoryMib: 2560, glassbox: process.env.GLASSBOX_BIN || path.join(ROOT, 'build', 'glassbox'),
    out: path.join(ROOT, 'bench', 'results', 'replicas.json') };
  for (let i = 0; i < argv.length; i++) {
    const v = argv[i + 1];
    if (argv[i] === '--calls') o.calls = Number(v), i++;
    else if (argv[i] === '--sessions') o.sessions = Number(v), i++;
    else if (argv[i] === '--memory-mib') o.memoryMib = Number(v), i++;
    else if (argv[i] === '--glassbox') o.glassbox = v, i++;
    else if (argv[i] === '--out') o.out = v, i++;
    else throw new Error(`unknown option ${argv[i]}`);
  }
  return o;
}

function freePort() {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

async function startReplica(opts) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-replicas-'));
  const token = crypto.randomBytes(24).toString('hex');
  const port = await freePort();
  const adminPort = await freePort();
  const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');
  const config = {
    listen: { host: '127.0.0.1', port },
    admin: { host: '127.0.0.1', port: adminPort, token_sha256: sha(crypto.randomBytes(8).toString('hex')) },
    limits: { max_sessions: opts.sessions + 4, idle_ttl_s: 3600 },
    replica: { id: 'r1' },
    tenants: { bench: { token_sha256: sha(token), max_sessions: opts.sessions + 4,
      policy: { egress: { allow_private: ['127.0.0.1:*'] }, risk: { evaluate: 'allow' } } } },
  };
  await writeFile(path.join(dir, 'serve.json'), JSON.stringify(config), { mode: 0o600 });
  const proc = spawn(opts.glassbox, ['serve', '--config', path.join(dir, 'serve.json')], {
    env: { ...process.env, GLASSBOX_DATA_DIR: path.join(dir, 'data'), GLASSBOX_LOG: 'warn' }, stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  for (let i = 0; i < 600 && !/admin on http/.test(stderr); i++) await sleep(50);
  if (!/admin on http/.test(stderr)) throw new Error(`glassbox serve did not start:\n${stderr}`);
  return { proc, dir, token, port, adminPort, url: `http://127.0.0.1:${port}/mcp` };
}

async function startHaproxy(replica) {
  const port = await freePort();
  const env = { ...process.env, GLASSBOX_LISTEN: `127.0.0.1:${port}`, GLASSBOX_R1: `127.0.0.1:${replica.port}`,
    GLASSBOX_R1_ADMIN_PORT: String(replica.adminPort), GLASSBOX_R2: '127.0.0.1:9', GLASSBOX_R2_ADMIN_PORT: '9',
    GLASSBOX_R3: '127.0.0.1:9', GLASSBOX_R3_ADMIN_PORT: '9' };
  const proc = spawn('haproxy', ['-db', '-f', path.join(ROOT, 'deploy', 'haproxy', 'haproxy.cfg')], { env, stdio: 'ignore' });
  await sleep(1500);
  return { proc, url: `http://127.0.0.1:${port}/mcp` };
}

// PSS (kB) of the replica's browsers: Chromium processes whose command line names its data dir
// or its browsers' dirs (/tmp/gb-browsers/<tag>-..., the tag in DATA/run/.browsers-tag).
function browsersPss(dataDir) {
  const needles = [dataDir];
  try {
    needles.push(`/tmp/gb-browsers/${readFileSync(path.join(dataDir, 'run', '.browsers-tag'), 'latin1').trim()}-`);
  } catch {}
  let kb = 0;
  for (const pid of readdirSync('/proc').filter((n) => /^\d+$/.test(n))) {
    let cmd = '';
    try {
      cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!needles.some((n) => cmd.includes(n)) || !/chrom/i.test(cmd)) continue;
    const m = memOf(Number(pid));
    if (Number.isFinite(m.pss)) kb += m.pss;
  }
  return kb;
}

async function connect(url, token) {
  const transport = new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new Client({ name: 'bench-replicas', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function call(client, name, args) {
  const t0 = performance.now();
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  return ms;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const site = await startSite(path.join(ROOT, 'bench', 'site'));
  const replica = await startReplica(opts);
  const lb = await startHaproxy(replica);
  const result = { machine: { cpus: os.cpus().length, load1: round(os.loadavg()[0], 2) }, calls: opts.calls };
  try {
    const direct = await connect(replica.url, replica.token);
    const proxied = await connect(lb.url, replica.token);
    for (const s of [direct, proxied]) await call(s.client, 'browser_navigate', { url: site.formUrl });
    const times = { direct: [], proxied: [] };
    for (let i = 0; i < 10; i++) for (const s of [direct, proxied]) await call(s.client, 'browser_snapshot', {}); // warm-up
    for (let i = 0; i < opts.calls; i++) {
      const order = i % 2 ? [['proxied', proxied], ['direct', direct]] : [['direct', direct], ['proxied', proxied]];
      for (const [k, s] of order) times[k].push(await call(s.client, 'browser_snapshot', {}));
    }
    result.snapshot = { direct: summary(times.direct), proxied: summary(times.proxied) };
    result.snapshot.ratio_median = round(result.snapshot.proxied.median / result.snapshot.direct.median, 3);
    result.snapshot.ratio_p95 = round(result.snapshot.proxied.p95 / result.snapshot.direct.p95, 3);
    for (const s of [direct, proxied]) { await s.transport.terminateSession(); await s.client.close(); }
    await sleep(3000);
    const base = browsersPss(path.join(replica.dir, 'data'));
    const own = memOf(replica.proc.pid).pss;
    const many = [];
    for (let i = 0; i < opts.sessions; i++) {
      const s = await connect(lb.url, replica.token);
      await call(s.client, 'browser_navigate', { url: site.formUrl });
      many.push(s);
    }
    await sleep(2000);
    const pss = browsersPss(path.join(replica.dir, 'data')) - base;
    const ownAfter = memOf(replica.proc.pid).pss;
    const perSession = (pss + (ownAfter - own)) / 1024 / opts.sessions;
    result.memory = { sessions: opts.sessions, browsers_pss_mib: round(pss / 1024), glassbox_pss_mib: round(ownAfter / 1024),
      per_session_mib: round(perSession), replica_limit_mib: opts.memoryMib,
      sessions_per_replica: Math.floor((opts.memoryMib - ownAfter / 1024) / perSession) };
    for (const s of many) { await s.transport.terminateSession().catch(() => {}); await s.client.close(); }
  } finally {
    lb.proc.kill('SIGTERM');
    replica.proc.kill('SIGTERM');
    await Promise.race([new Promise((r) => replica.proc.on('exit', r)), sleep(60000)]);
    await killTree(replica.proc.pid, { rootIsGroupLeader: true }).catch(() => {});
    await rm(replica.dir, { recursive: true, force: true });
    await site.close();
  }
  const s = result.snapshot;
  console.log('browser_snapshot, ms      median    p95');
  console.log(`  direct to the replica   ${String(s.direct.median).padStart(6)} ${String(s.direct.p95).padStart(6)}`);
  console.log(`  through HAProxy         ${String(s.proxied.median).padStart(6)} ${String(s.proxied.p95).padStart(6)}`);
  console.log(`  ratio                   ${String(s.ratio_median).padStart(6)} ${String(s.ratio_p95).padStart(6)}`);
  const m = result.memory;
  console.log(`memory: ${m.per_session_mib} MiB a session (${m.sessions} sessions, browsers ${m.browsers_pss_mib} MiB PSS, glassbox ${m.glassbox_pss_mib} MiB): ${m.sessions_per_replica} sessions in ${m.replica_limit_mib} MiB`);
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, JSON.stringify(result, null, 2));
}

main().catch((e) => { console.error(e); process.exit(2); });
