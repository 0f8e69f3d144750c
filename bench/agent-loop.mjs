#!/usr/bin/env node
// Agent-loop benchmark: the same browser task through glassbox, Playwright MCP and
// chrome-devtools-mcp (each over stdio with the official MCP SDK client), and over raw CDP
// (the floor). See bench/README.md.
import { mkdtemp, rm, mkdir, writeFile, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { startSite } from './lib/site-server.mjs';
import { FloorDriver } from './lib/floor.mjs';
import { makeMcpDriver, QUIET_FLAGS } from './lib/servers.mjs';
import { runIteration, STEPS } from './lib/loop.mjs';
import { summary, percentile, ratio, round, median } from './lib/stats.mjs';
import { runPairedRounds } from './lib/paired.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const ALL = ['floor', 'floor-shots', 'glassbox', 'noegress', 'answerfirst', 'answerfirst-base', 'playwright', 'devtools'];
// noegress (glassbox with every egress layer off) runs only when asked for: --egress-cost, or --only;
// so does answerfirst (glassbox answering before its evidence screenshot is in: --answer-first),
// and answerfirst-base (the same with the --baseline binary, another build to compare with).
const DEFAULT_ONLY = ['floor', 'floor-shots', 'glassbox', 'playwright', 'devtools'];
const PEERS = ['playwright', 'devtools'];

function usage(code) {
  console.log(`usage: bench/run.sh [options]
  --only LIST             servers to run, comma-separated from: ${ALL.join(',')}
                          (default: ${DEFAULT_ONLY.join(',')}); noegress is glassbox with every
                          egress layer off
  --egress-cost           the cost of glassbox's egress layers: runs glassbox and noegress only
                          (no concurrency run unless --concurrency is given) and reports on/off
  --answer-first          glassbox answering before its evidence screenshot is in (policy
                          evidence.before_answer false) beside glassbox and the floor
  --think-ms N            an agent's think time before each call, in ms (default 0): the loop
                          then includes it; the steps do not
  --paired                every server's session open at once, one iteration of each per round
                          in a rotating order; reports each round's sum of steps over the floor's
                          in that round, and their median (no cold starts, no concurrency run)
  --iterations N          measured loop iterations per server, after one warm-up (default 10)
  --cold-runs N           cold starts per server, each on a fresh server; the median is reported (default 5)
  --concurrency K         clients at once for the concurrency run, 0 to skip (default 8)
  --concurrency-on LIST   servers that get the concurrency run (default: floor,glassbox)
  --chromium PATH         browser for every server and the floor (default /usr/bin/chromium)
  --glassbox PATH         glassbox binary (default build/glassbox, or $GLASSBOX_BIN)
  --baseline PATH         another glassbox binary, run as server answerfirst-base (answering
                          first, as answerfirst): two builds side by side, e.g. with --paired
  --glassbox-args ARGS    extra arguments after \`glassbox mcp\`, space-separated (or $GLASSBOX_ARGS)
  --rows N                the form page with a list of N orders under it (links and buttons), as
                          a real page is: what each step costs on a large page (default 0)
  --server-timeout S      budget for one server's whole run, seconds (default 300)
  --out FILE              JSON results (default bench/results/latest.json)`);
  process.exit(code);
}

function parseArgs(argv) {
  const o = {
    only: DEFAULT_ONLY, iterations: 10, thinkMs: 0, paired: false, coldRuns: 5, concurrency: 8, concurrencyOn: ['floor', 'glassbox'],
    chromium: '/usr/bin/chromium',
    glassbox: process.env.GLASSBOX_BIN ? path.resolve(REPO, process.env.GLASSBOX_BIN) : path.join(REPO, 'build', 'glassbox'),
    glassboxArgs: (process.env.GLASSBOX_ARGS || '').split(' ').filter(Boolean),
    serverTimeoutS: 300, out: path.join(HERE, 'results', 'latest.json'),
  };
  let egressCost = false;
  let concurrencyGiven = false;
  for (let i = 0; i < argv.length; i++) {
    let a = argv[i];
    let v;
    const eq = a.indexOf('=');
    if (a.startsWith('--') && eq > 0) { v = a.slice(eq + 1); a = a.slice(0, eq); }
    const next = () => {
      if (v !== undefined) return v;
      if (i + 1 >= argv.length) { console.error(`${a} needs a value`); usage(2); }
      return argv[++i];
    };
    const list = (s) => s.split(',').map((x) => x.trim()).filter(Boolean);
    const int = (s, min) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < min) { console.error(`${a}: expected an integer >= ${min}`); usage(2); }
      return n;
    };
    switch (a) {
      case '--only': o.only = list(next()); break;
      case '--egress-cost': o.only = ['glassbox', 'noegress']; egressCost = true; break;
      case '--answer-first': o.only = ['floor', 'glassbox', 'answerfirst']; o.concurrency = 0; break;
      case '--think-ms': o.thinkMs = int(next(), 0); break;
      case '--paired': o.paired = true; break;
      case '--iterations': o.iterations = int(next(), 1); break;
      case '--cold-runs': o.coldRuns = int(next(), 1); break;
      case '--concurrency': o.concurrency = int(next(), 0); concurrencyGiven = true; break;
      case '--concurrency-on': o.concurrencyOn = list(next()); break;
      case '--chromium': o.chromium = next(); break;
      case '--glassbox': o.glassbox = path.resolve(next()); break;
      case '--baseline': o.baseline = path.resolve(next()); break;
      case '--glassbox-args': o.glassboxArgs = next().split(' ').filter(Boolean); break;
      case '--rows': o.rows = int(next(), 0); break;
      case '--server-timeout': o.serverTimeoutS = int(next(), 10); break;
      case '--out': o.out = path.resolve(next()); break;
      case '-h': case '--help': usage(0); break;
      default: console.error(`unknown option ${a}`); usage(2);
    }
  }
  for (const s of [...o.only, ...o.concurrencyOn]) {
    if (!ALL.includes(s)) { console.error(`unknown server ${s}`); usage(2); }
  }
  if ((egressCost || o.paired) && !concurrencyGiven) o.concurrency = 0;
  o.only = ALL.filter((s) => o.only.includes(s));
  o.concurrencyOn = o.concurrencyOn.filter((s) => o.only.includes(s));
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const active = new Set();
let tmpBase;
let site;

const log = (...a) => console.error('[bench]', ...a);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const mb = (kb) => (Number.isFinite(kb) ? round(kb / 1024, 1) : null);
const rnd = () => Math.random().toString(36).slice(2, 7);

function withTimeout(promise, ms, what) {
  let timer;
  return Promise.race([
    promise,
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: exceeded ${ms / 1000} s`)), ms); }),
  ]).finally(() => clearTimeout(timer));
}

async function newDriver(name, ctx) {
  // floor-shots: the floor plus the screenshot glassbox keeps after each state-changing step
  const d = name.startsWith('floor')
    ? new FloorDriver({ name, chromium: opts.chromium, flags: floorFlags(), tmpBase: ctx.tmpBase, evidence: name === 'floor-shots' })
    : await makeMcpDriver(name, ctx);
  active.add(d);
  return d;
}

async function stopDriver(d) {
  if (!d) return null;
  try { return await d.stop(); } catch (err) { return { error: String(err?.message || err) }; } finally { active.delete(d); }
}

function floorFlags() {
  // glassbox's window size: the floor paints and captures the same pixels (its default is smaller);
  // and, like glassbox, no omnibox popup WebUI (a renderer of its own that headless never shows)
  return [
    '--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--mute-audio', '--window-size=1280,720',
    '--disable-features=WebUIOmniboxPopup,WebUIOmniboxAimPopup', ...QUIET_FLAGS,
  ];
}

function errInfo(err) {
  return { step: err?.step ?? null, message: String(err?.message || err).slice(0, 600) };
}

// ---- one server: cold start, warm-up, N measured iterations, memory --------------------------------

// One more cold start (spawn -> first navigate result) on a server of its own, then stopped.
async function extraColdStart(name, ctx) {
  const d = await newDriver(name, ctx);
  try {
    const t0 = performance.now();
    await d.start();
    await d.navigate(site.formUrl);
    return performance.now() - t0;
  } finally {
    await stopDriver(d);
  }
}

async function runServer(name, ctx) {
  const rec = { server: name, ok: false, iterations: [], errors: [], notes: [] };
  let d;
  const body = async () => {
    // a cold start is one sample: take several, each on a fresh server, and report the median
    const colds = [];
    for (let i = 1; i < opts.coldRuns; i++) colds.push(await extraColdStart(name, ctx));
    d = await newDriver(name, ctx);
    const t0 = performance.now();
    try {
      await d.start();
    } catch (err) {
      err.step = 'start';
      throw err;
    }
    rec.connect_ms = round(performance.now() - t0);
    try {
      await d.navigate(site.formUrl);
    } catch (err) {
      err.step = 'first navigate';
      throw err;
    }
    colds.push(performance.now() - t0);
    rec.cold_start_samples_ms = colds.map((v) => round(v));
    rec.cold_start_ms = round(summary(colds).median);
    log(`${name}: cold start ${rec.cold_start_ms} ms (median of ${colds.length})`);
    await runIteration(d, site.formUrl, `warmup-${rnd()}`, opts.thinkMs);
    for (let i = 0; i < opts.iterations && !aborted; i++) {
      try {
        const it = await runIteration(d, site.formUrl, `note-${i}-${rnd()}`, opts.thinkMs);
        rec.iterations.push({ total: round(it.total, 2), steps: Object.fromEntries(Object.entries(it.steps).map(([k, v]) => [k, round(v, 2)])) });
      } catch (err) {
        rec.errors.push({ iteration: i, ...errInfo(err) });
        log(`${name}: iteration ${i} failed at ${err.step}: ${err.message}`);
        if (rec.errors.length > Math.max(2, opts.iterations / 2)) throw new Error(`too many failed iterations (${rec.errors.length})`);
      }
    }
    const mem = d.memory();
    rec.memory = {
      server_rss_mb: mb(mem.server_rss_kb),
      server_pss_mb: mb(mem.server_pss_kb),
      browser_pss_mb: mb(mem.browser.pss_kb),
      browser_rss_sum_mb: mb(mem.browser.rss_sum_kb),
      browser_processes: mem.browser.count,
      total_pss_mb: mb((mem.server_pss_kb || 0) + mem.browser.pss_kb),
    };
    rec.ok = rec.iterations.length > 0;
  };
  let aborted = false;
  try {
    await withTimeout(body(), opts.serverTimeoutS * 1000, name);
  } catch (err) {
    aborted = true;
    rec.ok = false;
    rec.failure = errInfo(err);
    log(`${name}: FAILED${err.step ? ` at ${err.step}` : ''}: ${err.message}`);
  }
  if (d) {
    rec.time_to_ready = d.timeToReady;
    rec.notes = [...d.notes];
    if (!rec.ok) rec.stderr_tail = (d.stderrTail || '').slice(-2000);
  }
  rec.cleanup = await stopDriver(d);
  rec.steps = {};
  for (const s of STEPS) rec.steps[s] = summary(rec.iterations.map((it) => it.steps[s]));
  rec.loop = summary(rec.iterations.map((it) => it.total));
  return rec;
}

// ---- paired: every server at once, one iteration of each per round ------------------------------

async function runPaired(ctx) {
  const drivers = {};
  const ref = opts.only.includes('floor') ? 'floor' : opts.only[0];
  try {
    for (const name of opts.only) {
      const d = await newDriver(name, ctx);
      await d.start();
      await d.navigate(site.formUrl);
      await runIteration(d, site.formUrl, `warmup-${rnd()}`, opts.thinkMs);
      drivers[name] = d;
    }
    return { ref, ...(await runPairedRounds(drivers, { ref, rounds: opts.iterations, url: site.formUrl, thinkMs: opts.thinkMs, log })) };
  } finally {
    for (const d of Object.values(drivers)) await stopDriver(d);
  }
}

function printPaired(p) {
  const short = { navigate: 'nav', snapshot: 'snap', type: 'type', click_save: 'save', confirm: 'confirm', click_link: 'link', title: 'title', screenshot: 'shot' };
  const out = [''];
  out.push(`Paired agent loop: ${opts.iterations} rounds, one iteration of each server per round (rotating order)` +
    `${opts.thinkMs ? `, ${opts.thinkMs} ms think time before each call (not in the steps)` : ''}; medians in ms`);
  let head = 'server'.padEnd(17);
  for (const s of STEPS) head += short[s].padStart(8);
  head += 'sum'.padStart(9) + `  sum / ${p.ref}: median of rounds (ratio of medians), rounds <= 1.5`;
  out.push(head);
  out.push('-'.repeat(head.length));
  for (const [name, s] of Object.entries(p.servers)) {
    let line = name.padEnd(17);
    for (const st of STEPS) line += fmt(s.steps[st]?.median, 8);
    line += fmt(s.sum?.median, 9);
    if (s.over_ref) {
      line += `  ${fmt(s.over_ref.median_of_rounds, 5, 2)} (${fmt(ratio(s.sum?.median, p.servers[p.ref].sum?.median), 0, 2)}), ` +
        `${s.over_ref.rounds_at_or_below_1_5} of ${s.over_ref.per_round.length}`;
    }
    if (s.failed_rounds) line += `  (${s.failed_rounds} failed rounds)`;
    out.push(line);
  }
  for (const [name, s] of Object.entries(p.servers)) {
    if (!s.over_ref) continue;
    out.push(`${name} / ${p.ref} per step (median of rounds): ` + STEPS.map((st) => `${short[st]} ${fmt(s.over_ref.steps[st], 0, 2)}`).join('  '));
  }
  if (p.servers.answerfirst && p.servers['answerfirst-base']) {
    // the two builds against each other, round by round
    const both = p.rounds.filter((r) => r.servers.answerfirst?.sum && r.servers['answerfirst-base']?.sum);
    const per = both.map((r) => r.servers.answerfirst.sum / r.servers['answerfirst-base'].sum);
    out.push(`answerfirst / answerfirst-base, sum of steps: median of rounds ${fmt(median(per), 0, 3)}, ` +
      `${per.filter((v) => v < 1).length} of ${per.length} rounds faster`);
  }
  console.log(out.join('\n'));
}

// ---- concurrency: K clients at once, each with its own server process ------------------------------

async function runConcurrency(name, k, ctx) {
  const res = { server: name, clients: k, iterations_per_client: opts.iterations, planned_loops: k * opts.iterations };
  const drivers = [];
  const loops = [];
  const colds = [];
  const errors = [];
  const ttrs = [];
  const client = async (j) => {
    let done = 0;
    let d;
    try {
      d = await newDriver(name, ctx);
      drivers.push(d);
      const t0 = performance.now();
      await d.start();
      await d.navigate(site.formUrl);
      colds.push(performance.now() - t0);
      await runIteration(d, site.formUrl, `c${j}-warmup-${rnd()}`);
      for (let i = 0; i < opts.iterations && !aborted; i++) {
        try {
          loops.push((await runIteration(d, site.formUrl, `c${j}-${i}-${rnd()}`)).total);
          done++;
        } catch (err) {
          errors.push({ client: j, iteration: i, ...errInfo(err) });
        }
      }
    } catch (err) {
      errors.push({ client: j, fatal: true, ...errInfo(err), stderr_tail: d?.stderrTail?.slice(-500) });
    } finally {
      if (d?.timeToReady) ttrs.push(d.timeToReady.ms);
    }
    return done;
  };
  let aborted = false;
  const t0 = performance.now();
  try {
    await withTimeout(Promise.all(Array.from({ length: k }, (_, j) => client(j))), opts.serverTimeoutS * 2000, `${name} x${k}`);
  } catch (err) {
    aborted = true;
    errors.push({ fatal: true, ...errInfo(err) });
  }
  res.wall_ms = round(performance.now() - t0);
  let serverPss = 0, browserPss = 0, nMem = 0;
  for (const d of drivers) {
    try {
      if (!d.pid) continue;
      const m = d.memory();
      serverPss += m.server_pss_kb || 0;
      browserPss += m.browser.pss_kb;
      nMem++;
    } catch { /* gone */ }
  }
  await Promise.all(drivers.map((d) => stopDriver(d)));
  res.completed_loops = loops.length;
  res.errors = res.planned_loops - loops.length;
  res.error_samples = errors.slice(0, 5);
  res.loop = { p50: round(percentile(loops, 50)), p95: round(percentile(loops, 95)), max: round(loops.length ? Math.max(...loops) : NaN) };
  res.cold_start = { p50: round(percentile(colds, 50)), p95: round(percentile(colds, 95)) };
  if (ttrs.length) res.time_to_ready = { p50: round(percentile(ttrs, 50)), p95: round(percentile(ttrs, 95)) };
  res.throughput_loops_per_s = res.wall_ms ? round(loops.length / (res.wall_ms / 1000), 2) : null;
  res.memory = { measured_clients: nMem, server_pss_mb_sum: mb(serverPss), browser_pss_mb_sum: mb(browserPss), total_pss_mb_sum: mb(serverPss + browserPss) };
  return res;
}

// ---- report -----------------------------------------------------------------------------------------

function fmt(x, w, digits = 1) {
  const s = x === null || x === undefined || !Number.isFinite(x) ? '-' : x.toFixed(digits);
  return s.padStart(w);
}

function printTable(results, ratios, conc) {
  const out = [];
  const short = { navigate: 'nav', snapshot: 'snap', type: 'type', click_save: 'save', confirm: 'confirm', click_link: 'link', title: 'title', screenshot: 'shot' };
  out.push('');
  out.push(`Agent loop, ${opts.iterations} iterations after 1 warm-up; medians in ms (per step and loop total), cold start = spawn -> first navigate result (median of ${opts.coldRuns} fresh servers)`);
  let head = 'server'.padEnd(11) + 'cold'.padStart(8);
  for (const s of STEPS) head += short[s].padStart(8);
  head += 'loop'.padStart(9) + 'p95'.padStart(8) + '  x floor (loop/cold)';
  out.push(head);
  out.push('-'.repeat(head.length));
  for (const r of results) {
    if (!r.ok) {
      out.push(r.server.padEnd(11) + `  FAILED${r.failure?.step ? ` at ${r.failure.step}` : ''}: ${(r.failure?.message || '').split('\n')[0].slice(0, 100)}`);
      continue;
    }
    let line = r.server.padEnd(11) + fmt(r.cold_start_ms, 8, 0);
    for (const s of STEPS) line += fmt(r.steps[s]?.median, 8);
    line += fmt(r.loop?.median, 9) + fmt(r.loop?.p95, 8);
    const rf = ratios.vs_floor[r.server];
    if (rf && r.server !== 'floor') line += `  ${fmt(rf.loop, 5, 2)} / ${fmt(rf.cold_start, 5, 2).trim()}`;
    if (r.errors.length) line += `  (${r.errors.length} failed iterations)`;
    out.push(line);
  }
  out.push('');
  out.push('Memory after the loop, MB: server process alone (RSS, PSS) and its browser tree (PSS summed over the chromium processes below it)');
  const mh = 'server'.padEnd(11) + 'srv RSS'.padStart(9) + 'srv PSS'.padStart(9) + 'browser PSS'.padStart(13) + 'procs'.padStart(7) + 'total PSS'.padStart(11) + '  time_to_ready';
  out.push(mh);
  out.push('-'.repeat(mh.length));
  for (const r of results) {
    if (!r.ok || !r.memory) continue;
    const m = r.memory;
    const ttr = r.time_to_ready ? `${round(r.time_to_ready.ms)} ms (${r.time_to_ready.source})` : '';
    out.push(r.server.padEnd(11) + fmt(m.server_rss_mb, 9) + fmt(m.server_pss_mb, 9) + fmt(m.browser_pss_mb, 13) + String(m.browser_processes).padStart(7) + fmt(m.total_pss_mb, 11) + '  ' + ttr);
  }
  const gb = ratios.glassbox_vs_peer;
  if (gb && Object.keys(gb).length) {
    out.push('');
    out.push('glassbox / peer (below 1: glassbox is faster or smaller)');
    for (const [peer, v] of Object.entries(gb)) {
      out.push(`  vs ${peer.padEnd(11)} loop ${fmt(v.loop, 5, 2)}   cold start ${fmt(v.cold_start, 5, 2)}   total PSS ${fmt(v.total_pss, 5, 2)}`);
    }
  }
  const fs = ratios.glassbox_vs_floor_shots;
  if (fs) {
    out.push('');
    out.push('glassbox / floor-shots (raw CDP with a PNG screenshot after each state-changing step, as glassbox keeps for evidence)');
    out.push(`  loop ${fmt(fs.loop, 5, 2)}   (floor-shots / floor: ${fmt(fs.shots_over_floor, 5, 2)})`);
  }
  const ec = ratios.egress_cost;
  if (ec) {
    out.push('');
    out.push('glassbox egress layers on / off (noegress): the layers cost what is above 1');
    out.push(`  loop ${fmt(ec.loop, 5, 2)}   loop p95 ${fmt(ec.loop_p95, 5, 2)}   cold start ${fmt(ec.cold_start, 5, 2)}   total PSS ${fmt(ec.total_pss, 5, 2)}`);
  }
  for (const c of conc) {
    out.push('');
    if (c.skipped) {
      out.push(`Concurrency on ${c.server}: skipped (${c.skipped.split('\n')[0].slice(0, 120)})`);
      continue;
    }
    out.push(`Concurrency: ${c.clients} clients at once on ${c.server} (one server process each), ${c.iterations_per_client} loops each`);
    out.push(`  loop p50 ${fmt(c.loop.p50, 0)} ms  p95 ${fmt(c.loop.p95, 0)} ms  max ${fmt(c.loop.max, 0)} ms  (p95 = ${fmt(c.p95_over_single_median, 0, 2)} x single median) | cold start p50 ${fmt(c.cold_start.p50, 0)} ms  p95 ${fmt(c.cold_start.p95, 0)} ms`);
    if (c.time_to_ready) out.push(`  time_to_ready p50 ${fmt(c.time_to_ready.p50, 0)} ms  p95 ${fmt(c.time_to_ready.p95, 0)} ms`);
    out.push(`  errors ${c.errors} of ${c.planned_loops} loops | ${c.throughput_loops_per_s ?? '-'} loops/s | wall ${fmt(c.wall_ms / 1000, 0, 1)} s | total PSS ${fmt(c.memory.total_pss_mb_sum, 0)} MB over ${c.memory.measured_clients} clients`);
    if (c.error_samples.length) out.push(`  first error: ${c.error_samples[0].step ? c.error_samples[0].step + ': ' : ''}${c.error_samples[0].message.split('\n')[0].slice(0, 160)}`);
  }
  for (const r of results) {
    if (!r.ok && r.stderr_tail) {
      out.push('');
      out.push(`${r.server} stderr (tail):`);
      out.push(r.stderr_tail.split('\n').slice(-15).map((l) => '  ' + l).join('\n'));
    }
  }
  console.log(out.join('\n'));
}

function computeRatios(results) {
  const by = Object.fromEntries(results.filter((r) => r.ok).map((r) => [r.server, r]));
  const vs_floor = {};
  const floor = by.floor;
  for (const r of Object.values(by)) {
    vs_floor[r.server] = floor ? { loop: ratio(r.loop?.median, floor.loop?.median), cold_start: ratio(r.cold_start_ms, floor.cold_start_ms) } : null;
  }
  const glassbox_vs_peer = {};
  if (by.glassbox) {
    for (const p of PEERS) {
      if (!by[p]) continue;
      glassbox_vs_peer[p] = {
        loop: ratio(by.glassbox.loop?.median, by[p].loop?.median),
        cold_start: ratio(by.glassbox.cold_start_ms, by[p].cold_start_ms),
        total_pss: ratio(by.glassbox.memory?.total_pss_mb, by[p].memory?.total_pss_mb),
      };
    }
  }
  // what evidence costs at the floor, and glassbox over that
  const glassbox_vs_floor_shots = by.glassbox && by['floor-shots']
    ? {
      loop: ratio(by.glassbox.loop?.median, by['floor-shots'].loop?.median),
      shots_over_floor: floor ? ratio(by['floor-shots'].loop?.median, floor.loop?.median) : null,
    }
    : null;
  // glassbox with every egress layer on / off (below 1.10: within the 10% budget)
  const egress_cost = by.glassbox && by.noegress
    ? {
      loop: ratio(by.glassbox.loop?.median, by.noegress.loop?.median),
      loop_p95: ratio(by.glassbox.loop?.p95, by.noegress.loop?.p95),
      cold_start: ratio(by.glassbox.cold_start_ms, by.noegress.cold_start_ms),
      total_pss: ratio(by.glassbox.memory?.total_pss_mb, by.noegress.memory?.total_pss_mb),
    }
    : null;
  return { vs_floor, glassbox_vs_peer, glassbox_vs_floor_shots, egress_cost };
}

async function versions() {
  const v = { node: process.version };
  for (const p of ['@playwright/mcp', 'chrome-devtools-mcp', '@modelcontextprotocol/sdk', 'ws']) {
    try { v[p] = JSON.parse(await readFile(path.join(HERE, 'node_modules', p, 'package.json'), 'utf8')).version; } catch { v[p] = null; }
  }
  try { v.chromium = execFileSync(opts.chromium, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10000 }).trim(); } catch { v.chromium = null; }
  try { v.repo_commit = execFileSync('git', ['-C', REPO, 'rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim(); } catch { /* not a checkout */ }
  if (opts.only.some((s) => ['glassbox', 'noegress', 'answerfirst'].includes(s))) {
    v.glassbox_bin = opts.glassbox;
    try { v.glassbox = execFileSync(opts.glassbox, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10000 }).trim(); } catch { v.glassbox = null; }
  }
  if (opts.only.includes('answerfirst-base')) v.glassbox_baseline_bin = opts.baseline ?? null;
  return v;
}

// ---- main -------------------------------------------------------------------------------------------

async function cleanupAll() {
  await Promise.all([...active].map((d) => stopDriver(d)));
  if (site) await site.close().catch(() => {});
  if (tmpBase) await rm(tmpBase, { recursive: true, force: true }).catch(() => {});
}

let stopping = false;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, async () => {
    if (stopping) return;
    stopping = true;
    log(`${sig}: stopping servers and removing temp dirs`);
    await cleanupAll();
    process.exit(130);
  });
}

async function main() {
  if (!existsSync(opts.chromium)) throw new Error(`no browser at ${opts.chromium}`);
  tmpBase = await mkdtemp(path.join(os.tmpdir(), 'glassbox-bench-'));
  site = await startSite(path.join(HERE, 'site'));
  if (opts.rows) site.formUrl += `?rows=${opts.rows}`;
  log(`fixture site at ${site.origin}; servers: ${opts.only.join(', ')}; ${opts.iterations} iterations`);
  const ctx = { tmpBase, chromium: opts.chromium, repoRoot: REPO, glassboxBin: opts.glassbox, baselineBin: opts.baseline, glassboxArgs: opts.glassboxArgs };
  if (opts.paired) {
    const p = await runPaired(ctx);
    printPaired(p);
    const report = { date: new Date().toISOString(), host: { cores: os.cpus().length, load: os.loadavg() },
      options: { only: opts.only, rounds: opts.iterations, think_ms: opts.thinkMs, rows: opts.rows || 0, paired: true }, versions: await versions(), paired: p };
    await mkdir(path.dirname(opts.out), { recursive: true });
    await writeFile(opts.out, JSON.stringify(report, null, 2) + '\n');
    log(`wrote ${path.relative(process.cwd(), opts.out) || opts.out}`);
    return Object.values(p.servers).every((s) => s.failed_rounds < opts.iterations / 2);
  }
  const results = [];
  for (const name of opts.only) {
    log(`${name}: starting`);
    results.push(await runServer(name, ctx));
    await sleep(500);
  }
  const conc = [];
  if (opts.concurrency > 0) {
    for (const name of opts.concurrencyOn) {
      const single = results.find((r) => r.server === name);
      if (single && !single.ok) {
        log(`${name}: concurrency run skipped, the single-client run failed`);
        conc.push({ server: name, clients: opts.concurrency, skipped: `single-client run failed: ${single.failure?.message ?? ''}` });
        continue;
      }
      log(`${name}: concurrency run, ${opts.concurrency} clients`);
      const c = await runConcurrency(name, opts.concurrency, ctx);
      /* how much one loop slows down when K run at once: p95 over the single-client median */
      if (single?.loop?.median) c.p95_over_single_median = round(c.loop.p95 / single.loop.median, 2);
      conc.push(c);
    }
  }
  const ratios = computeRatios(results);
  const report = {
    date: new Date().toISOString(),
    host: { cores: os.cpus().length, mem_gb: round(os.totalmem() / 2 ** 30, 1), kernel: os.release() },
    options: { only: opts.only, iterations: opts.iterations, cold_runs: opts.coldRuns, concurrency: opts.concurrency, concurrency_on: opts.concurrencyOn, chromium: opts.chromium, rows: opts.rows || 0 },
    versions: await versions(),
    site: { origin: site.origin, requests: site.stats.requests, saves: site.stats.saves },
    results,
    ratios,
    concurrency: conc,
  };
  printTable(results, ratios, conc);
  await mkdir(path.dirname(opts.out), { recursive: true });
  await writeFile(opts.out, JSON.stringify(report, null, 2) + '\n');
  log(`wrote ${path.relative(process.cwd(), opts.out) || opts.out}`);
  return results.every((r) => r.ok) && conc.every((c) => !c.skipped && c.errors === 0);
}

main()
  .then(async (allOk) => { await cleanupAll(); process.exit(allOk ? 0 : 1); })
  .catch(async (err) => { console.error('[bench] fatal:', err?.stack || err); await cleanupAll(); process.exit(2); });
