#!/usr/bin/env node
// One-call bench: what a step whose floor is a single CDP round trip costs through glassbox, by
// layer. The same read (`() => document.title` on the bench form page) is timed as
//   floor  one Runtime.evaluate over raw CDP (bench/lib/floor.mjs),
//   raw    one browser_evaluate as raw JSON-RPC lines over glassbox's stdio (no SDK),
//   sdk    one browser_evaluate through the official MCP SDK client (what the loop measures),
// each with a think time between calls, as an agent has, and beside each MCP path a JSON-RPC ping
// on the same connection (raw-ping, sdk-ping): what the path costs with no browser work at all.
// See bench/README.md, "Where a one-round-trip step's time goes".
//
//   bench/run.sh one-call [--calls N] [--think-ms T] [--chromium PATH] [--baseline BIN]
//
// --baseline BIN runs the raw and sdk paths again on another glassbox build (rows *-base).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { FloorDriver } from './lib/floor.mjs';
import { McpDriver } from './lib/mcp-driver.mjs';
import { glassboxAdapter, QUIET_FLAGS } from './lib/servers.mjs';
import { startSite } from './lib/site-server.mjs';
import { median, percentile, round } from './lib/stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const FN = '() => document.title';

function parseArgs(argv) {
  const o = { calls: 40, thinkMs: 100, chromium: '/usr/bin/chromium', baseline: null };
  for (let i = 0; i < argv.length; i++) {
    const [a, inline] = argv[i].split('=', 2);
    const v = () => inline ?? argv[++i];
    if (a === '--calls') o.calls = Math.max(1, Number(v()) | 0);
    else if (a === '--think-ms') o.thinkMs = Math.max(0, Number(v()) || 0);
    else if (a === '--chromium') o.chromium = v();
    else if (a === '--baseline') o.baseline = v();
    else { console.error('usage: bench/run.sh one-call [--calls N] [--think-ms T] [--chromium PATH] [--baseline BIN]'); process.exit(2); }
  }
  return o;
}

/* Times fn o.calls times, a think time before each; returns the times in ms. */
async function timed(o, fn) {
  const ts = [];
  for (let i = 0; i < o.calls; i++) {
    await new Promise((r) => setTimeout(r, o.thinkMs));
    const t = performance.now();
    await fn();
    ts.push(performance.now() - t);
  }
  return ts;
}

async function floor(o, url, tmpBase) {
  const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--mute-audio', '--window-size=1280,720', ...QUIET_FLAGS];
  const f = new FloorDriver({ name: 'floor', chromium: o.chromium, flags, tmpBase });
  await f.start();
  try {
    await f.navigate(url);
    return await timed(o, () => f.send('Runtime.evaluate', { expression: `(${FN})()`, returnByValue: true }));
  } finally {
    await f.stop();
  }
}

/* browser_evaluate as raw JSON-RPC lines over glassbox's stdin and stdout. */
async function raw(o, url, tmpBase, glassboxBin) {
  const a = await glassboxAdapter({ repoRoot: REPO, tmpBase, answerFirst: true, glassboxBin });
  const p = spawn(a.command, a.args, { env: a.env, cwd: a.cwd, stdio: ['pipe', 'pipe', 'ignore'] });
  const waiters = new Map();
  let buf = '';
  let id = 0;
  p.stdout.on('data', (c) => {
    buf += c;
    for (let i; (i = buf.indexOf('\n')) >= 0; buf = buf.slice(i + 1)) {
      const m = JSON.parse(buf.slice(0, i));
      waiters.get(m.id)?.(m);
    }
  });
  const rpc = (method, params) => new Promise((resolve, reject) => {
    const my = ++id;
    waiters.set(my, (m) => (m.error || m.result?.isError ? reject(new Error(JSON.stringify(m).slice(0, 300))) : resolve(m)));
    p.stdin.write(JSON.stringify({ jsonrpc: '2.0', id: my, method, params }) + '\n');
  });
  try {
    await rpc('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'one-call', version: '1' } });
    p.stdin.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }) + '\n');
    await rpc('tools/call', { name: 'browser_navigate', arguments: { url } });
    const calls = await timed(o, () => rpc('tools/call', { name: 'browser_evaluate', arguments: { function: FN } }));
    return [calls, await timed(o, () => rpc('ping', {}))];
  } finally {
    p.stdin.end();
    await new Promise((r) => { p.once('exit', r); setTimeout(() => { p.kill('SIGKILL'); r(); }, 5000); });
    await a.cleanup();
  }
}

async function sdk(o, url, tmpBase, glassboxBin) {
  const d = new McpDriver(await glassboxAdapter({ repoRoot: REPO, tmpBase, answerFirst: true, glassboxBin }));
  await d.start();
  try {
    await d.call('browser_navigate', { url });
    const calls = await timed(o, () => d.call('browser_evaluate', { function: FN }));
    return [calls, await timed(o, () => d.client.ping())];
  } finally {
    await d.stop();
  }
}

const o = parseArgs(process.argv.slice(2));
const tmpBase = await mkdtemp(path.join(os.tmpdir(), 'glassbox-one-call-'));
const site = await startSite(path.join(HERE, 'site'));
const rows = [];
try {
  rows.push(['floor', await floor(o, site.formUrl, tmpBase)]);
  for (const [suffix, bin] of [['', undefined], ...(o.baseline ? [['-base', o.baseline]] : [])])
    for (const [name, run] of [['raw', raw], ['sdk', sdk]]) {
      const [calls, pings] = await run(o, site.formUrl, tmpBase, bin);
      rows.push([name + suffix, calls], [`${name}-ping${suffix}`, pings]);
    }
} finally {
  await site.close?.();
  await rm(tmpBase, { recursive: true, force: true });
}
const floorMedian = median(rows[0][1]);
console.log(`one read of document.title, ${o.calls} calls, ${o.thinkMs} ms think time (ms)`);
console.log('path'.padEnd(14) + 'median'.padStart(8) + 'p95'.padStart(8) + 'x floor'.padStart(9));
for (const [name, ts] of rows)
  console.log(name.padEnd(14) + String(round(median(ts), 2)).padStart(8) + String(round(percentile(ts, 95), 2)).padStart(8) + String(round(median(ts) / floorMedian, 2)).padStart(9));
