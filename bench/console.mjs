#!/usr/bin/env node
// bench/console.mjs: what people watching in the web console cost the agents.
//
// glassbox serve with S sessions (default 2); each session's agent runs rounds of
// navigate + snapshot + evaluate on the bench site through the official MCP SDK client. Rounds
// alternate between phases without viewers and phases with V viewers per session (default 4),
// each its own console login, pulling /console/sessions/ID/frame the way the console's page does
// (one request every 1000/F ms), or with --greedy as fast as they can (every 20 ms, whatever the
// answer). Reports the median round time of each kind and their ratio, the frames each viewer
// got per second (the service bounds it by console.frames_per_second) and how many requests
// were refused with 429.
//
//   node bench/console.mjs [--sessions S] [--viewers V] [--rounds R] [--phases P] [--fps F]
//                          [--greedy] [--glassbox PATH] [--out FILE]
//
// R rounds per phase (default 6), P phases of each kind (default 3). JSON goes to
// bench/results/console.json.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSite } from './lib/site-server.mjs';
import { killTree, browserTree, cpuMs } from './lib/proc.mjs';
import { median, ratio } from './lib/stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sha = (s) => crypto.createHash('sha256').update(s).digest('hex');

function parseArgs(argv) {
  const o = { sessions: 2, viewers: 4, rounds: 6, phases: 3, fps: 5,
    glassbox: process.env.GLASSBOX_BIN || path.join(REPO, 'build', 'glassbox'), out: path.join(HERE, 'results', 'console.json') };
  for (let i = 2; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--sessions': o.sessions = Number(v); i++; break;
      case '--viewers': o.viewers = Number(v); i++; break;
      case '--rounds': o.rounds = Number(v); i++; break;
      case '--phases': o.phases = Number(v); i++; break;
      case '--fps': o.fps = Number(v); i++; break;
      case '--greedy': o.greedy = true; break;
      case '--glassbox': o.glassbox = path.resolve(v); i++; break;
      case '--out': o.out = path.resolve(v); i++; break;
      default: console.error(`unknown option ${argv[i]}`); process.exit(2);
    }
  }
  return o;
}

async function startServe(o) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-console-'));
  const token = crypto.randomBytes(24).toString('hex');
  const adminToken = crypto.randomBytes(24).toString('hex');
  const policy = { egress: { allow_private: ['127.0.0.1:*', '[::1]:*'] }, risk: { evaluate: 'allow' } };
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    limits: { max_sessions: o.sessions + 2, idle_ttl_s: 3600 },
    tenants: { bench: { token_sha256: sha(token), policy, max_sessions: o.sessions + 2 } },
    admin: { host: '127.0.0.1', port: 0, token_sha256: sha(adminToken) },
    console: { frames_per_second: o.fps },
  };
  const cfg = path.join(dir, 'serve.json');
  await writeFile(cfg, JSON.stringify(config), { mode: 0o600 });
  const proc = spawn(o.glassbox, ['serve', '--config', cfg], {
    env: { ...process.env, GLASSBOX_DATA_DIR: path.join(dir, 'data'), GLASSBOX_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'], detached: true,
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const adminRe = /admin on http:\/\/127\.0\.0\.1:(\d+)\//;
  const mcpRe = /MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/;
  for (let i = 0; i < 600 && !(mcpRe.test(stderr) && adminRe.test(stderr)); i++) await sleep(50);
  if (!mcpRe.test(stderr) || !adminRe.test(stderr)) throw new Error(`glassbox serve did not start:\n${stderr}`);
  return { url: `http://127.0.0.1:${stderr.match(mcpRe)[1]}/mcp`, adminUrl: `http://127.0.0.1:${stderr.match(adminRe)[1]}`,
    token, adminToken, proc, dir };
}

async function connect(svc) {
  const transport = new StreamableHTTPClientTransport(new URL(svc.url), {
    requestInit: { headers: { Authorization: `Bearer ${svc.token}` } },
  });
  const client = new Client({ name: 'bench-console', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function call(client, name, args) {
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 120000 });
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  return r;
}

// One agent round: navigate, snapshot, evaluate; its duration in ms.
async function round(client, url) {
  const t0 = performance.now();
  await call(client, 'browser_navigate', { url });
  await call(client, 'browser_snapshot', {});
  await call(client, 'browser_evaluate', { function: '() => document.title' });
  return performance.now() - t0;
}

// CPU time of glassbox itself and of its browsers.
function cpuNow(svc) {
  return { glassbox: cpuMs(svc.proc.pid), browsers: browserTree(svc.proc.pid).processes.reduce((a, p) => a + cpuMs(p.pid), 0) };
}

async function login(svc) {
  const r = await fetch(`${svc.adminUrl}/console/login`, {
    method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token: svc.adminToken }), redirect: 'manual',
  });
  if (r.status !== 303) throw new Error(`console login: ${r.status}`);
  return r.headers.get('set-cookie').split(';')[0];
}

// A greedy viewer of session id until stop.on; counts frames and refusals.
async function viewer(svc, cookie, id, stop, counts, pauseMs) {
  let after = 0;
  while (!stop.on) {
    const r = await fetch(`${svc.adminUrl}/console/sessions/${id}/frame?after=${after}`, { headers: { cookie } }).catch(() => null);
    if (r?.status === 200) {
      await r.arrayBuffer();
      after = Number(r.headers.get('x-frame-seq'));
      counts.frames++;
    } else {
      if (r?.status === 429) counts.refused++;
      await r?.arrayBuffer().catch(() => {});
    }
    await sleep(pauseMs);
  }
}

async function main() {
  const o = parseArgs(process.argv);
  const site = await startSite(path.join(HERE, 'site'));
  const svc = await startServe(o);
  const agents = [];
  const result = { sessions: o.sessions, viewers_per_session: o.viewers, fps: o.fps, greedy: !!o.greedy, rounds_per_phase: o.rounds, phases: o.phases };
  try {
    for (let i = 0; i < o.sessions; i++) agents.push(await connect(svc));
    await Promise.all(agents.map((a) => round(a.client, site.formUrl))); // warm up
    const cookies = [];
    for (let i = 0; i < o.sessions * o.viewers; i++) cookies.push(await login(svc));
    const times = { without: [], with: [] };
    const counts = { frames: 0, refused: 0 };
    const cpu = { without: { glassbox: 0, browsers: 0 }, with: { glassbox: 0, browsers: 0 } };
    let watchedMs = 0;
    for (let p = 0; p < o.phases * 2; p++) {
      const watched = p % 2 === 1;
      const stop = { on: false };
      const viewers = [];
      if (watched) {
        agents.forEach((a, s) => {
          for (let v = 0; v < o.viewers; v++) viewers.push(viewer(svc, cookies[s * o.viewers + v], a.transport.sessionId, stop, counts, o.greedy ? 20 : Math.round(1000 / o.fps)));
        });
        await sleep(1500); // the screencasts start
      }
      const t0 = performance.now();
      const c0 = cpuNow(svc);
      for (let r = 0; r < o.rounds; r++) {
        const ms = await Promise.all(agents.map((a) => round(a.client, site.formUrl)));
        times[watched ? 'with' : 'without'].push(...ms);
      }
      if (watched) watchedMs += performance.now() - t0;
      const c1 = cpuNow(svc);
      cpu[watched ? 'with' : 'without'].glassbox += c1.glassbox - c0.glassbox;
      cpu[watched ? 'with' : 'without'].browsers += c1.browsers - c0.browsers;
      stop.on = true;
      await Promise.all(viewers);
      process.stderr.write(`phase ${p + 1}/${o.phases * 2} (${watched ? 'watched' : 'unwatched'}) done\n`);
    }
    result.round_median_ms_without_viewers = Math.round(median(times.without));
    result.round_median_ms_with_viewers = Math.round(median(times.with));
    result.ratio_with_to_without = ratio(median(times.with), median(times.without));
    result.frames_per_viewer_per_second = Math.round((counts.frames / (o.sessions * o.viewers) / (watchedMs / 1000)) * 10) / 10;
    result.refused_429 = counts.refused;
    // CPU per agent round, glassbox's own process and its browsers
    const perRound = (ms) => Math.round(ms / (o.phases * o.rounds * o.sessions));
    result.cpu_ms_per_round = {
      glassbox_without: perRound(cpu.without.glassbox), glassbox_with: perRound(cpu.with.glassbox),
      browsers_without: perRound(cpu.without.browsers), browsers_with: perRound(cpu.with.browsers),
    };
  } finally {
    for (const a of agents) await a.transport.terminateSession().catch(() => {});
    svc.proc.kill('SIGTERM');
    await Promise.race([new Promise((r) => svc.proc.on('exit', r)), sleep(60000)]);
    await killTree(svc.proc.pid, { rootIsGroupLeader: true }).catch(() => {});
    await rm(svc.dir, { recursive: true, force: true });
    await site.close?.();
  }
  console.log('| sessions | viewers each | viewers | round median, no viewers | with viewers | ratio | frames/s per viewer (bound) | 429s |');
  console.log('|---|---|---|---|---|---|---|---|');
  console.log(`| ${result.sessions} | ${result.viewers_per_session} | ${o.greedy ? 'greedy' : 'page-paced'} | ${result.round_median_ms_without_viewers} ms | ${result.round_median_ms_with_viewers} ms | ${result.ratio_with_to_without} | ${result.frames_per_viewer_per_second} (${o.fps}) | ${result.refused_429} |`);
  const c = result.cpu_ms_per_round;
  console.log(`CPU per agent round: glassbox ${c.glassbox_without} -> ${c.glassbox_with} ms, its browsers ${c.browsers_without} -> ${c.browsers_with} ms (without -> with viewers)`);
  await mkdir(path.dirname(o.out), { recursive: true });
  await writeFile(o.out, JSON.stringify(result, null, 2));
}

main().catch((e) => { console.error(e); process.exit(1); });
