#!/usr/bin/env node
// bench/cdp-relay.mjs: what glassbox's CDP endpoint costs a Playwright suite.
//
// The same Playwright script (playwright-core, connectOverCDP) runs its loop on the bench site
// against two browsers:
//   - glassbox: a session of `glassbox serve` (POST /sessions, then its /cdp/<id> websocket): the
//     relay with its allowlist, element probes and evidence, and the session's egress proxy and
//     Fetch interception behind it;
//   - direct: the same Chromium binary launched here with --remote-debugging-port and the flags
//     glassbox launched its browser with (read from the session's session_opened record, less the
//     profile, proxy and DevTools ones), connected to directly.
// One iteration: goto the form, fill the note, click Save, wait for "Saved: <text>", click the
// link, wait for the second page, read the title, take a screenshot. Rounds alternate between the
// two (glassbox then direct, direct then glassbox, ...) so that a busy machine weighs on both
// alike; the first iterations of each are warm-up. Reports the median per iteration and the
// overhead (glassbox / direct - 1); the paired overhead (the median of each round's own ratio,
// its two halves measured back to back); and the CPU time per iteration of glassbox with its
// browser against the direct browser's (process trees, /proc), which the neighbours of a shared
// machine move far less than they move wall time.
//
//   node bench/cdp-relay.mjs [--iterations N] [--rounds R] [--chromium PATH] [--glassbox PATH] [--out FILE]
//
// --chromium is the browser launched directly (default: the binary glassbox runs).
//
// Prints a table and writes JSON (default bench/results/cdp-relay.json).
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import crypto from 'node:crypto';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startSite } from './lib/site-server.mjs';
import { killTree, treeCpuMs, cpuMs } from './lib/proc.mjs';
import { median, round } from './lib/stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function parseArgs(argv) {
  // glassbox runs /usr/lib/chromium/chromium (the binary behind Debian's /usr/bin/chromium)
  const o = { iterations: 10, rounds: 3, warmup: 2,
    chromium: existsSync('/usr/lib/chromium/chromium') ? '/usr/lib/chromium/chromium' : '/usr/bin/chromium',
    glassbox: process.env.GLASSBOX_BIN || path.join(REPO, 'build', 'glassbox'), out: path.join(HERE, 'results', 'cdp-relay.json') };
  for (let i = 2; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--iterations': o.iterations = Number(v); i++; break;
      case '--rounds': o.rounds = Number(v); i++; break;
      case '--chromium': o.chromium = v; i++; break;
      case '--glassbox': o.glassbox = path.resolve(v); i++; break;
      case '--out': o.out = path.resolve(v); i++; break;
      default: console.error(`unknown option ${argv[i]}`); process.exit(2);
    }
  }
  return o;
}

// The flags glassbox launched the session's browser with (its session_opened record's manifest),
// less what is the session's own (profile, proxy, resolver, DevTools port, user switch, the
// window); waits for the record.
const OWN_FLAGS = /^--(user-data-dir|proxy-server|host-resolver-rules|remote-debugging-(port|address)|reuid|regid|clear-groups|window-size|headless|no-sandbox|no-startup-window)(=|$)/;
async function glassboxFlags(auditDir) {
  for (let i = 0; i < 1200; i++) {
    const lines = existsSync(auditDir)
      ? readdirSync(auditDir).filter((f) => f.endsWith('.jsonl')).flatMap((f) => readFileSync(path.join(auditDir, f), 'utf8').split('\n'))
      : [];
    for (const line of lines) {
      if (!line.includes('"session_opened"')) continue;
      let r;
      try {
        r = JSON.parse(line);
      } catch {
        continue;
      }
      const flags = r.body && r.body.manifest && r.body.manifest.launch_flags;
      if (r.kind === 'session_opened' && Array.isArray(flags)) return flags.filter((f) => f.startsWith('--') && !OWN_FLAGS.test(f));
    }
    await sleep(50);
  }
  throw new Error('glassbox recorded no session_opened with its launch flags');
}

// glassbox serve with one tenant whose policy offers CDP; resolves {wsEndpoint, flags, stop}.
async function startGlassbox(opts) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-cdp-'));
  const token = crypto.randomBytes(24).toString('hex');
  const policy = { egress: { allow_private: ['127.0.0.1:*'] }, cdp: 'allow' };
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    limits: { idle_ttl_s: 3600, unused_ttl_s: 3600 },
    tenants: { bench: { token_sha256: crypto.createHash('sha256').update(token).digest('hex'), policy } },
  };
  const cfg = path.join(dir, 'serve.json');
  await writeFile(cfg, JSON.stringify(config), { mode: 0o600 });
  const proc = spawn(opts.glassbox, ['serve', '--config', cfg], {
    env: { ...process.env, GLASSBOX_DATA_DIR: path.join(dir, 'data'), GLASSBOX_LOG: 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'], detached: true,
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const re = /MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/;
  for (let i = 0; i < 300 && !re.test(stderr); i++) await sleep(50);
  const port = (stderr.match(re) || [])[1];
  if (!port) throw new Error(`glassbox serve did not start:\n${stderr}`);
  const res = await fetch(`http://127.0.0.1:${port}/sessions`, { method: 'POST', headers: { authorization: `Bearer ${token}` } });
  const s = await res.json();
  if (res.status !== 201) throw new Error(`POST /sessions: ${res.status} ${JSON.stringify(s)}`);
  return {
    pid: proc.pid,
    wsEndpoint: `${s.wsEndpoint}?token=${token}`,
    flags: await glassboxFlags(path.join(dir, 'data', 'tenants', 'bench', 'audit')),
    async stop() {
      proc.kill('SIGTERM');
      await Promise.race([new Promise((r) => proc.on('exit', r)), sleep(60000)]);
      await killTree(proc.pid, { rootIsGroupLeader: true }).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// The same Chromium launched directly with glassbox's flags and a DevTools port; resolves
// {wsEndpoint, stop}.
async function startDirect(opts, flags) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-direct-'));
  const args = ['--headless', ...flags, '--remote-debugging-port=0', '--remote-debugging-address=127.0.0.1',
    `--user-data-dir=${dir}`, '--window-size=1280,720', 'about:blank'];
  if (process.getuid && process.getuid() === 0) args.unshift('--no-sandbox');
  const proc = spawn(opts.chromium, args, { stdio: ['ignore', 'ignore', 'pipe'], detached: true });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const re = /DevTools listening on (ws:\/\/\S+)/;
  for (let i = 0; i < 400 && !re.test(stderr); i++) await sleep(50);
  const ws = (stderr.match(re) || [])[1];
  if (!ws) throw new Error(`Chromium did not start:\n${stderr.slice(-2000)}`);
  return {
    pid: proc.pid,
    wsEndpoint: ws,
    async stop() {
      await killTree(proc.pid, { rootIsGroupLeader: true }).catch(() => {});
      await rm(dir, { recursive: true, force: true });
    },
  };
}

// The steps of one iteration, in order (their times go to the JSON as steps_ms).
const STEPS = ['goto', 'fill', 'click', 'saved', 'next', 'url', 'title', 'shot'];

// One iteration of the Playwright script; returns its duration in ms and each step's.
async function iteration(page, site, i) {
  const text = `note ${i}`;
  const steps = {};
  const t0 = performance.now();
  let t = t0;
  const mark = (name) => {
    const now = performance.now();
    steps[name] = now - t;
    t = now;
  };
  await page.goto(site.formUrl);
  mark('goto');
  await page.fill('#note', text);
  mark('fill');
  await page.click('#save');
  mark('click');
  await page.waitForFunction((t) => document.getElementById('status').textContent === `Saved: ${t}`, text);
  mark('saved');
  await page.click('#next');
  mark('next');
  await page.waitForURL('**/second.html');
  mark('url');
  if ((await page.title()) !== 'Second page') throw new Error('the second page did not load');
  mark('title');
  await page.screenshot();
  mark('shot');
  return { ms: performance.now() - t0, steps };
}

// Connects Playwright to wsEndpoint and runs n iterations (after warm-up ones); resolves
// {samples, cpu_ms, own_cpu_ms}: the iterations, and the CPU time the process tree of pid (glassbox
// and its browser, or the direct browser) used during them, and pid alone.
async function runLoop(wsEndpoint, pid, site, n, warmup) {
  const browser = await chromium.connectOverCDP(wsEndpoint, { timeout: 120000 });
  try {
    const ctx = browser.contexts()[0];
    const page = ctx.pages()[0] || (await ctx.newPage());
    for (let i = 0; i < warmup; i++) await iteration(page, site, -1 - i);
    const samples = [];
    const cpu0 = treeCpuMs(pid);
    const own0 = cpuMs(pid);
    for (let i = 0; i < n; i++) samples.push(await iteration(page, site, i));
    return { samples, cpu_ms: treeCpuMs(pid) - cpu0, own_cpu_ms: cpuMs(pid) - own0 };
  } finally {
    await browser.close();
  }
}

async function main() {
  const opts = parseArgs(process.argv);
  const site = await startSite(path.join(HERE, 'site'));
  const gb = await startGlassbox(opts);
  const direct = await startDirect(opts, gb.flags);
  const all = { glassbox: [], direct: [] };
  const cpu = { glassbox: 0, direct: 0, glassbox_own: 0 };
  const rounds = [];
  try {
    for (let r = 0; r < opts.rounds; r++) {
      const round_ = {};
      // which side goes first alternates too, so that neither always runs on the other's heels
      const order = r % 2 ? [['direct', direct], ['glassbox', gb]] : [['glassbox', gb], ['direct', direct]];
      for (const [k, side] of order) {
        process.stderr.write(`round ${r + 1}/${opts.rounds}: ${k}\n`);
        const got = await runLoop(side.wsEndpoint, side.pid, site, opts.iterations, r === 0 ? opts.warmup : 0);
        all[k].push(...got.samples);
        cpu[k] += got.cpu_ms;
        if (k === 'glassbox') cpu.glassbox_own += got.own_cpu_ms;
        round_[k] = median(got.samples.map((x) => x.ms));
      }
      round_.ratio = round_.glassbox / round_.direct;
      rounds.push(round_);
    }
  } finally {
    await gb.stop();
    await direct.stop();
    await site.close();
  }
  const ms = (k) => all[k].map((x) => x.ms);
  const mg = median(ms('glassbox'));
  const md = median(ms('direct'));
  const steps = {};
  for (const k of ['glassbox', 'direct'])
    steps[k] = Object.fromEntries(STEPS.map((st) => [st, round(median(all[k].map((x) => x.steps[st])))]));
  const cpuPer = { glassbox: cpu.glassbox / all.glassbox.length, direct: cpu.direct / all.direct.length };
  const result = {
    when: new Date().toISOString(),
    load1: round(os.loadavg()[0], 2),
    iterations: all.glassbox.length,
    chromium: opts.chromium,
    direct_flags: gb.flags,
    median_ms: { glassbox: round(mg), direct: round(md) },
    overhead_percent: round((mg / md - 1) * 100),
    // each round's median glassbox / direct, both measured back to back: the machine's swings
    // between rounds cancel out
    round_overhead_percent: rounds.map((x) => round((x.ratio - 1) * 100)),
    paired_overhead_percent: round((median(rounds.map((x) => x.ratio)) - 1) * 100),
    // CPU time per iteration: glassbox with its browser, against the direct browser
    // glassbox_own: the glassbox process alone (relay, camera, evidence, egress proxy), in glassbox
    cpu_ms_per_iteration: { glassbox: round(cpuPer.glassbox), glassbox_own: round(cpu.glassbox_own / all.glassbox.length), direct: round(cpuPer.direct) },
    cpu_overhead_percent: round((cpuPer.glassbox / cpuPer.direct - 1) * 100),
    step_median_ms: steps,
    samples_ms: { glassbox: ms('glassbox').map((x) => round(x)), direct: ms('direct').map((x) => round(x)) },
  };
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, JSON.stringify(result, null, 2));
  console.log('| browser | median per iteration (ms) |');
  console.log('|---|---|');
  console.log(`| glassbox CDP endpoint | ${result.median_ms.glassbox} |`);
  console.log(`| Chromium direct | ${result.median_ms.direct} |`);
  console.log(`overhead: ${result.overhead_percent} % (median of ${result.iterations} iterations each)`);
  console.log(`paired overhead: ${result.paired_overhead_percent} % (median of the rounds' own ratios: ${result.round_overhead_percent.join(', ')} %)`);
  console.log(`CPU per iteration: glassbox and its browser ${result.cpu_ms_per_iteration.glassbox} ms (glassbox itself ${result.cpu_ms_per_iteration.glassbox_own}), direct browser ${result.cpu_ms_per_iteration.direct} ms: ${result.cpu_overhead_percent} %`);
  console.log(`\n| step (median ms) | ${STEPS.join(' | ')} |`);
  console.log(`|---|${STEPS.map(() => '---').join('|')}|`);
  for (const k of ['glassbox', 'direct']) console.log(`| ${k} | ${STEPS.map((st) => steps[k][st]).join(' | ')} |`);
}

main().catch((e) => {
  console.error(e);
  process.exit(2);
});
