#!/usr/bin/env node
// bench/isolation.mjs: N sessions of one tenant in each isolation mode of glassbox serve.
//
// For "process" (a Chromium per session, the default) and "context" (the tenant's sessions share
// one Chromium, a browser context each), through the official MCP SDK's Streamable HTTP client:
//   - memory: N sessions opened one after another, each navigated to the bench site, then the
//     total PSS of every Chromium process below glassbox (sum of /proc/PID/smaps_rollup Pss; the
//     crash handler left out, as everywhere in bench/) and the number of browser processes;
//   - step latency: the N sessions at once, each R steps (a navigate, then a snapshot, in turn);
//     median and p95 of every step's time to answer;
//   - sessions per GiB of browser PSS, and the ratio context / process.
//
//   node bench/isolation.mjs [--sessions N] [--rounds R] [--glassbox PATH] [--out FILE]
//
// Prints a table and writes JSON (default bench/results/isolation.json).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startSite } from './lib/site-server.mjs';
import { killTree, browserTree, exeOf } from './lib/proc.mjs';
import { summary } from './lib/stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');

function parseArgs(argv) {
  const o = { sessions: 16, rounds: 10, modes: ['process', 'context'], glassbox: process.env.GLASSBOX_BIN || path.join(REPO, 'build', 'glassbox'),
    out: path.join(HERE, 'results', 'isolation.json') };
  for (let i = 2; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--sessions': o.sessions = Number(v); i++; break;
      case '--rounds': o.rounds = Number(v); i++; break;
      case '--glassbox': o.glassbox = path.resolve(v); i++; break;
      case '--out': o.out = path.resolve(v); i++; break;
      case '--modes': o.modes = v.split(','); i++; break;
      default: console.error(`unknown option ${argv[i]}`); process.exit(2);
    }
  }
  return o;
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mib = (kb) => Math.round((kb / 1024) * 10) / 10;

async function startServe(opts, isolation) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-isolation-'));
  const token = crypto.randomBytes(24).toString('hex');
  const policy = { egress: { allow_private: ['127.0.0.1:*', '[::1]:*'] }, risk: { evaluate: 'allow' }, isolation };
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    limits: { max_sessions: opts.sessions + 4, idle_ttl_s: 3600 },
    tenants: { bench: { token_sha256: crypto.createHash('sha256').update(token).digest('hex'), policy,
      max_sessions: opts.sessions + 4 } },
  };
  const cfg = path.join(dir, 'serve.json');
  await writeFile(cfg, JSON.stringify(config), { mode: 0o600 });
  const proc = spawn(opts.glassbox, ['serve', '--config', cfg], {
    env: { ...process.env, GLASSBOX_DATA_DIR: path.join(dir, 'data'), GLASSBOX_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'], detached: true,
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  for (let i = 0; i < 300 && !/MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.test(stderr); i++) await sleep(50);
  const port = (stderr.match(/MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/) || [])[1];
  if (!port) throw new Error(`glassbox serve did not start:\n${stderr}`);
  return { url: `http://127.0.0.1:${port}/mcp`, token, proc, dir, stderr: () => stderr };
}

async function connect(svc) {
  const transport = new StreamableHTTPClientTransport(new URL(svc.url), {
    requestInit: { headers: { Authorization: `Bearer ${svc.token}` } },
  });
  const client = new Client({ name: 'bench-isolation', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

async function step(client, name, args) {
  const t0 = performance.now();
  const r = await client.callTool({ name, arguments: args }, undefined, { timeout: 300000 });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`${name} failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  return { ms, browser: r.structuredContent?.browser };
}

async function stop(svc) {
  svc.proc.kill('SIGTERM');
  await Promise.race([new Promise((r) => svc.proc.on('exit', r)), sleep(60000)]);
  await killTree(svc.proc.pid, { rootIsGroupLeader: true }).catch(() => {});
  await rm(svc.dir, { recursive: true, force: true });
}

// The kind of a Chromium process: its --type= (renderer, gpu-process, utility with its
// sub-type, zygote), or "browser" for the main process.
function kindOf(pid) {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    const type = (/--type=([\w-]+)/.exec(cmd) || [])[1];
    const sub = (/--utility-sub-type=([\w.-]+)/.exec(cmd) || [])[1];
    if (!type) return /chrom(e|ium)$/.test(exeOf(pid)) ? 'browser' : 'other';
    return sub ? `${type}:${sub.replace(/^.*\./, '')}` : type;
  } catch {
    return 'gone';
  }
}

// {kind: {count, pss_mib}} of a browser tree.
function byKind(tree) {
  const out = {};
  for (const p of tree.processes) {
    const k = kindOf(p.pid);
    out[k] = out[k] || { count: 0, pss_kb: 0 };
    out[k].count++;
    if (Number.isFinite(p.pss_kb)) out[k].pss_kb += p.pss_kb;
  }
  for (const k of Object.keys(out)) out[k] = { count: out[k].count, pss_mib: mib(out[k].pss_kb) };
  return out;
}

async function measure(opts, site, isolation) {
  const svc = await startServe(opts, isolation);
  const sessions = [];
  const kinds = {};
  try {
    while (sessions.length < opts.sessions) {
      const s = await connect(svc);
      const r = await step(s.client, 'browser_navigate', { url: site.formUrl });
      kinds[r.browser || 'unknown'] = (kinds[r.browser || 'unknown'] || 0) + 1;
      sessions.push(s);
    }
    await sleep(3000); // let the browsers settle after their first page
    const tree = browserTree(svc.proc.pid);
    const times = [];
    await Promise.all(sessions.map(async (s) => {
      for (let i = 0; i < opts.rounds; i++) {
        const r = i % 2 === 0
          ? await step(s.client, 'browser_navigate', { url: i % 4 === 0 ? `${site.origin}/second.html` : site.formUrl })
          : await step(s.client, 'browser_snapshot', {});
        times.push(r.ms);
      }
    }));
    const gib = tree.pss_kb / (1024 * 1024);
    return {
      isolation,
      sessions: opts.sessions,
      browsers: kinds,
      browser_processes: tree.count,
      browser_mains: byKind(tree).browser?.count ?? 0,
      by_kind: byKind(tree),
      total_pss_mib: mib(tree.pss_kb),
      pss_per_session_mib: mib(tree.pss_kb / opts.sessions),
      sessions_per_gib: Math.round((opts.sessions / gib) * 100) / 100,
      step_ms: summary(times),
    };
  } finally {
    for (const s of sessions) await s.transport.terminateSession().catch(() => {});
    await stop(svc);
  }
}

async function main() {
  const opts = parseArgs(process.argv);
  const site = await startSite(path.join(HERE, 'site'));
  const out = { when: new Date().toISOString(), host: { cpus: os.cpus().length, mem_gib: Math.round(os.totalmem() / 2 ** 30) },
    sessions: opts.sessions, rounds: opts.rounds, modes: {} };
  try {
    for (const mode of opts.modes) {
      console.error(`isolation ${mode}: ${opts.sessions} sessions...`);
      out.modes[mode] = await measure(opts, site, mode);
    }
  } finally {
    await site.close();
  }
  const p = out.modes.process, c = out.modes.context;
  console.log('| isolation | sessions | browser processes (mains) | total PSS MiB | PSS/session MiB | sessions/GiB | step median ms | step p95 ms |');
  console.log('|---|---|---|---|---|---|---|---|');
  for (const m of Object.values(out.modes))
    console.log(`| ${m.isolation} | ${m.sessions} | ${m.browser_processes} (${m.browser_mains}) | ${m.total_pss_mib} | ${m.pss_per_session_mib} | ${m.sessions_per_gib} | ${m.step_ms.median} | ${m.step_ms.p95} |`);
  for (const m of Object.values(out.modes))
    console.log(`${m.isolation}: ${Object.entries(m.by_kind).map(([k, v]) => `${k} ${v.count} × = ${v.pss_mib} MiB`).join(', ')}`);
  if (p && c) {
    out.sessions_per_gib_ratio = Math.round((c.sessions_per_gib / p.sessions_per_gib) * 100) / 100;
    out.p95_step_ratio = Math.round((c.step_ms.p95 / p.step_ms.p95) * 100) / 100;
    console.log(`sessions per GiB, context / process: ${out.sessions_per_gib_ratio}x; p95 step, context / process: ${out.p95_step_ratio}x`);
  }
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, JSON.stringify(out, null, 2));
}

main().catch((e) => { console.error(e); process.exit(1); });
