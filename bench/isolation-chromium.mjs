#!/usr/bin/env node
// bench/isolation-chromium.mjs: where the memory of a session goes in each isolation mode, with
// Chromium alone (no glassbox): N browser contexts of one Chromium, a tab each ("context"), or N
// Chromiums, a tab each ("process"), each tab navigated to the bench site; then the PSS of every
// process of the trees (/proc/PID/smaps_rollup), by kind, the median of --runs runs.
//
// Chromium gets glassbox's own base flags (read from sessions/process.c), headless, --no-sandbox.
//   node bench/isolation-chromium.mjs [--mode context|process] [--sessions N] [--runs R]
//        [--window WxH] [--emulate] [--same-context] [--chromium PATH] [--flags "..."]
// --window sets --window-size (default 1280x720, as glassbox); --emulate gives each tab a
// 1280x720 viewport with Emulation.setDeviceMetricsOverride (so a smaller window does not change
// what the page sees); --same-context opens every tab in one context (what a window per context
// costs).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { startSite } from './lib/site-server.mjs';
import { browserTree } from './lib/proc.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseArgs(argv) {
  const o = { mode: 'context', sessions: 16, runs: 3, window: '1280x720', emulate: false, sameContext: false,
    chromium: '/usr/lib/chromium/chromium', flags: [] };
  for (let i = 2; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--mode': o.mode = v; i++; break;
      case '--sessions': o.sessions = Number(v); i++; break;
      case '--runs': o.runs = Number(v); i++; break;
      case '--window': o.window = v; i++; break;
      case '--emulate': o.emulate = true; break;
      case '--same-context': o.sameContext = true; break;
      case '--chromium': o.chromium = v; i++; break;
      case '--flags': o.flags = v.split(' ').filter(Boolean); i++; break;
      default: console.error(`unknown option ${argv[i]}`); process.exit(2);
    }
  }
  return o;
}

// glassbox's base flags: the string literals of base_flags[] in sessions/process.c (adjacent
// literals joined, as C does).
function baseFlags() {
  const src = fs.readFileSync(path.join(HERE, '..', 'sessions', 'process.c'), 'utf8');
  const body = src.split('base_flags[] = {')[1].split('};')[0].replace(/\/\*[\s\S]*?\*\//g, '');
  const out = [];
  for (const lit of body.match(/"[^"]*"/g).map((l) => l.slice(1, -1))) {
    if (out.length && out[out.length - 1].endsWith(',')) out[out.length - 1] += lit;
    else out.push(lit);
  }
  return out;
}

async function launch(o) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-bench-chromium-'));
  const args = [...baseFlags(), '--headless', '--no-sandbox', `--user-data-dir=${dir}`,
    `--window-size=${o.window.replace('x', ',')}`, ...o.flags];
  const proc = spawn(o.chromium, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let err = '';
  proc.stderr.on('data', (d) => { err += d; });
  for (let i = 0; i < 1200 && !/ws:\/\/\S+/.test(err); i++) await sleep(50);
  const wsUrl = (err.match(/ws:\/\/\S+/) || [])[0];
  if (!wsUrl) throw new Error(`Chromium did not start:\n${err}`);
  const ws = new WebSocket(wsUrl);
  await new Promise((r, j) => { ws.on('open', r); ws.on('error', j); });
  let id = 0;
  const pending = new Map();
  ws.on('message', (m) => {
    const j = JSON.parse(m);
    if (j.id && pending.has(j.id)) { pending.get(j.id)(j); pending.delete(j.id); }
  });
  const call = (method, params = {}, sessionId) => new Promise((r, j) => {
    const i = ++id;
    pending.set(i, (res) => (res.error ? j(new Error(`${method}: ${res.error.message}`)) : r(res.result)));
    ws.send(JSON.stringify({ id: i, method, params, sessionId }));
  });
  return { proc, ws, call, dir };
}

async function openTab(o, b, url, contextId) {
  const t = await b.call('Target.createTarget', { url: 'about:blank', ...(contextId ? { browserContextId: contextId } : {}) });
  const { sessionId } = await b.call('Target.attachToTarget', { targetId: t.targetId, flatten: true });
  for (const d of ['Page.enable', 'Network.enable', 'Runtime.enable']) await b.call(d, {}, sessionId);
  if (o.emulate)
    await b.call('Emulation.setDeviceMetricsOverride', { width: 1280, height: 720, deviceScaleFactor: 1, mobile: false,
      screenWidth: 1280, screenHeight: 720 }, sessionId);
  await b.call('Page.navigate', { url }, sessionId);
}

function kindOf(pid) {
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1');
    const type = (/--type=([\w-]+)/.exec(cmd) || [])[1];
    const sub = (/--utility-sub-type=([\w.-]+)/.exec(cmd) || [])[1];
    if (!type) return 'browser';
    return sub ? `${type}:${sub.replace(/^.*\./, '')}` : type;
  } catch {
    return 'gone';
  }
}

async function once(o, url) {
  const browsers = [];
  try {
    if (o.mode === 'context') {
      const b = await launch(o);
      browsers.push(b);
      const one = o.sameContext ? (await b.call('Target.createBrowserContext', { disposeOnDetach: true })).browserContextId : null;
      for (let i = 0; i < o.sessions; i++)
        await openTab(o, b, url, one || (await b.call('Target.createBrowserContext', { disposeOnDetach: true })).browserContextId);
    } else {
      for (let i = 0; i < o.sessions; i++) {
        const b = await launch(o);
        browsers.push(b);
        await openTab(o, b, url, null);
      }
    }
    await sleep(3000); // as bench/isolation.mjs: let the tabs settle after their first page
    const kinds = {};
    let total = 0;
    for (const b of browsers) {
      for (const p of browserTree(b.proc.pid, { includeRoot: true }).processes) {
        const k = kindOf(p.pid);
        kinds[k] = kinds[k] || { count: 0, pss_kb: 0 };
        kinds[k].count++;
        kinds[k].pss_kb += p.pss_kb || 0;
        total += p.pss_kb || 0;
      }
    }
    return { total_kb: total, kinds };
  } finally {
    for (const b of browsers) {
      try { process.kill(-b.proc.pid, 'SIGKILL'); } catch {}
    }
    await sleep(1000);
    for (const b of browsers) fs.rmSync(b.dir, { recursive: true, force: true, maxRetries: 5 });
  }
}

const o = parseArgs(process.argv);
const site = await startSite(path.join(HERE, 'site'));
const runs = [];
try {
  for (let i = 0; i < o.runs; i++) runs.push(await once(o, site.formUrl));
} finally {
  await site.close();
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor(s.length / 2)]; };
const mib = (kb) => Math.round((kb / 1024) * 10) / 10;
const kinds = Object.keys(runs[0].kinds).map((k) => `${k} ${runs[0].kinds[k].count}× ${mib(median(runs.map((r) => r.kinds[k]?.pss_kb ?? 0)))}`);
console.log(`${o.mode} sessions=${o.sessions} window=${o.window}${o.emulate ? ' emulate' : ''}${o.sameContext ? ' same-context' : ''}` +
  `${o.flags.length ? ' flags=' + o.flags.join(' ') : ''}: median total PSS ${mib(median(runs.map((r) => r.total_kb)))} MiB ` +
  `(runs: ${runs.map((r) => mib(r.total_kb)).join(', ')}); by kind (median MiB): ${kinds.join(', ')}`);
process.exit(0);
