#!/usr/bin/env node
// bench/serve.mjs: glassbox serve with many sessions in one process.
//
// Measures, through the official MCP SDK's Streamable HTTP client:
//   - memory: the glassbox process alone (RSS and PSS from smaps_rollup) with 1 session and with
//     N sessions, each of which navigated the bench site; reported as MiB per extra session;
//   - the first navigate of a new session with a warm pool (its result says "browser": "pooled")
//     and without one, median over a few sessions.
//
//   node bench/serve.mjs [--sessions N] [--pool K] [--rounds R] [--glassbox PATH] [--out FILE]
//
// Prints a table and writes JSON (default bench/results/serve.json).
//
//   node bench/serve.mjs --rss [--sessions N] [--churn-rounds C] [--glassbox PATH] [--out FILE]
//
// measures instead whether memory returns: the glassbox process's RSS and PSS when idle before any
// session, then after each of C rounds (default 3) of N sessions at once (default 8; initialize, a
// navigate and a snapshot of the bench site, DELETE), each read once every session has closed and
// every browser is gone. JSON goes to bench/results/serve-rss.json.
import { readFileSync } from 'node:fs';
import { writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSite } from './lib/site-server.mjs';
import { memOf, browserTree } from './lib/proc.mjs';
import { median } from './lib/stats.mjs';
import { sleep, startServe, connect, navigate, stop } from './lib/serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');

function parseArgs(argv) {
  const o = { sessions: 8, pool: 2, rounds: 5, glassbox: process.env.GLASSBOX_BIN || path.join(REPO, 'build', 'glassbox'),
    out: undefined, rss: false, churnRounds: 3 };
  for (let i = 2; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--sessions': o.sessions = Number(v); i++; break;
      case '--pool': o.pool = Number(v); i++; break;
      case '--rounds': o.rounds = Number(v); i++; break;
      case '--glassbox': o.glassbox = path.resolve(v); i++; break;
      case '--out': o.out = path.resolve(v); i++; break;
      case '--rss': o.rss = true; break;
      case '--churn-rounds': o.churnRounds = Number(v); i++; break;
      default: console.error(`unknown option ${argv[i]}`); process.exit(2);
    }
  }
  o.out = o.out || path.join(HERE, 'results', o.rss ? 'serve-rss.json' : 'serve.json');
  return o;
}

const mib = (kb) => Math.round((kb / 1024) * 10) / 10;

// Memory of the glassbox process with 1 session, then with opts.sessions.
async function measureMemory(opts, site) {
  const svc = await startServe(opts, 0);
  const sessions = [];
  try {
    const settle = async () => { await sleep(1500); return memOf(svc.proc.pid); };
    sessions.push(await connect(svc));
    await navigate(sessions[0].client, site.formUrl);
    const one = await settle();
    while (sessions.length < opts.sessions) {
      const s = await connect(svc);
      await navigate(s.client, site.formUrl);
      sessions.push(s);
    }
    const many = await settle();
    return {
      sessions: opts.sessions,
      one: { rss_mib: mib(one.rss), pss_mib: mib(one.pss) },
      many: { rss_mib: mib(many.rss), pss_mib: mib(many.pss) },
      per_extra_session_rss_mib: Math.round(((many.rss - one.rss) / 1024 / (opts.sessions - 1)) * 100) / 100,
      per_extra_session_pss_mib: Math.round(((many.pss - one.pss) / 1024 / (opts.sessions - 1)) * 100) / 100,
    };
  } finally {
    for (const s of sessions) await s.transport.terminateSession().catch(() => {});
    await stop(svc);
  }
}

// The first navigate of opts.rounds new sessions, one after another, with a pool of size pool.
async function measureFirstNavigate(opts, site, pool) {
  const svc = await startServe(opts, pool);
  const times = [];
  const kinds = {};
  try {
    if (pool) await sleep(8000); // let the pool fill before the first session
    for (let i = 0; i < opts.rounds; i++) {
      const t0 = performance.now();
      const s = await connect(svc);
      const r = await navigate(s.client, site.formUrl);
      times.push(performance.now() - t0);
      kinds[r.browser || 'unknown'] = (kinds[r.browser || 'unknown'] || 0) + 1;
      await s.transport.terminateSession().catch(() => {});
      if (pool) await sleep(4000); // the pool refills in the background, as between real sessions
    }
  } finally {
    await stop(svc);
  }
  return { pool, rounds: opts.rounds, median_ms: Math.round(median(times)), browsers: kinds };
}

// The sessions the service still holds, by state, from its admin /metrics (glassbox_sessions).
async function sessionGauge(svc) {
  const res = await fetch(`${svc.adminUrl}/metrics`, { headers: { authorization: `Bearer ${svc.adminToken}` } });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET /metrics: ${res.status} ${text.slice(0, 200)}`);
  const out = {};
  for (const m of text.matchAll(/^glassbox_sessions\{state="(\w+)"\} (\d+)/gm)) out[m[1]] = Number(m[2]);
  return out;
}

// Waits until the service holds no session (none busy, idle or closing) and no browser runs below it.
async function waitAllClosed(svc, deadlineMs = 120000) {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const g = await sessionGauge(svc);
    const held = Object.values(g).reduce((a, b) => a + b, 0);
    const browsers = browserTree(svc.proc.pid).count;
    if (held === 0 && browsers === 0) return;
    if (Date.now() > until) throw new Error(`sessions still held after ${deadlineMs} ms: ${JSON.stringify(g)}, ${browsers} browser processes`);
    await sleep(250);
  }
}

// One session's life: initialize, navigate, snapshot, DELETE.
async function churnSession(svc, site) {
  const s = await connect(svc);
  await navigate(s.client, site.formUrl);
  const snap = await s.client.callTool({ name: 'browser_snapshot', arguments: {} }, undefined, { timeout: 120000 });
  if (snap.isError) throw new Error(`snapshot failed: ${JSON.stringify(snap.content).slice(0, 300)}`);
  await s.transport.terminateSession();
  await s.client.close();
}

// The glassbox process's RSS split into anonymous memory (heap, stacks) and file pages (its
// binary and the libraries, touched once), in KiB, from /proc/PID/status.
function rssSplit(pid) {
  const text = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (k) => Number(new RegExp(`^${k}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { anon: kb('RssAnon'), file: kb('RssFile'), threads: Number(/^Threads:\s+(\d+)/m.exec(text)?.[1] ?? NaN) };
}

// A reading: RSS, PSS, and the RSS's anonymous and file parts, in MiB.
function reading(pid) {
  const m = memOf(pid);
  const sp = rssSplit(pid);
  return { rss_mib: mib(m.rss), pss_mib: mib(m.pss), anon_mib: mib(sp.anon), file_mib: mib(sp.file), threads: sp.threads };
}

// RSS and PSS of the glassbox process before any session and after each round of opts.sessions
// sessions at once, every one of them closed.
async function measureChurn(opts, site) {
  const svc = await startServe(opts, 0);
  try {
    await sleep(2000);
    const before = reading(svc.proc.pid);
    const rounds = [];
    for (let r = 0; r < opts.churnRounds; r++) {
      await Promise.all(Array.from({ length: opts.sessions }, () => churnSession(svc, site)));
      await waitAllClosed(svc);
      await sleep(2000);
      const m = reading(svc.proc.pid);
      rounds.push({ round: r + 1, ...m });
      console.error(`round ${r + 1}: ${opts.sessions} sessions came and went; RSS ${m.rss_mib} MiB`);
    }
    const last = rounds[rounds.length - 1];
    return {
      sessions_per_round: opts.sessions,
      rounds: opts.churnRounds,
      before,
      after_each_round: rounds,
      after_over_before_rss_mib: Math.round((last.rss_mib - before.rss_mib) * 10) / 10,
      last_over_first_round_rss_mib: Math.round((last.rss_mib - rounds[0].rss_mib) * 10) / 10,
    };
  } finally {
    await stop(svc);
  }
}

async function mainRss(opts, site) {
  const churn = await measureChurn(opts, site);
  const report = { date: new Date().toISOString(), cores: os.cpus().length, churn };
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, JSON.stringify(report, null, 2));
  console.log(`glassbox serve, ${churn.rounds} rounds of ${churn.sessions_per_round} sessions at once ` +
    '(initialize, navigate + snapshot of the bench site, DELETE), every session closed before each reading');
  const line = (r) => `${r.rss_mib} MiB RSS (${r.anon_mib} anonymous, ${r.file_mib} file pages; ${r.pss_mib} PSS), ${r.threads} threads`;
  console.log(`  glassbox process alone, before any session: ${line(churn.before)}`);
  for (const r of churn.after_each_round) console.log(`  after round ${r.round}: ${line(r)}`);
  console.log(`  after the last round over before: ${churn.after_over_before_rss_mib} MiB RSS; ` +
    `over the first round: ${churn.last_over_first_round_rss_mib} MiB`);
}

async function main() {
  const opts = parseArgs(process.argv);
  const site = await startSite(path.join(HERE, 'site'));
  if (opts.rss) {
    try {
      await mainRss(opts, site);
    } finally {
      await site.close();
    }
    return;
  }
  try {
    const memory = await measureMemory(opts, site);
    const cold = await measureFirstNavigate(opts, site, 0);
    const warm = await measureFirstNavigate(opts, site, opts.pool);
    const report = { date: new Date().toISOString(), memory, first_navigate: { no_pool: cold, warm_pool: warm },
      warm_over_cold: Math.round((warm.median_ms / cold.median_ms) * 100) / 100 };
    await mkdir(path.dirname(opts.out), { recursive: true });
    await writeFile(opts.out, JSON.stringify(report, null, 2));
    console.log(`glassbox serve, ${opts.sessions} sessions in one process (bench site, each navigated once)`);
    console.log(`  glassbox process alone: 1 session ${memory.one.rss_mib} MiB RSS (${memory.one.pss_mib} PSS); ` +
      `${opts.sessions} sessions ${memory.many.rss_mib} MiB RSS (${memory.many.pss_mib} PSS)`);
    console.log(`  per extra session: ${memory.per_extra_session_rss_mib} MiB RSS, ${memory.per_extra_session_pss_mib} MiB PSS`);
    console.log(`first navigate of a new session (connect + initialize + navigate), median of ${opts.rounds}:`);
    console.log(`  no pool ${cold.median_ms} ms ${JSON.stringify(cold.browsers)} | warm pool of ${opts.pool}: ` +
      `${warm.median_ms} ms ${JSON.stringify(warm.browsers)} | ratio ${report.warm_over_cold}`);
  } finally {
    await site.close();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
