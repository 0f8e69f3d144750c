#!/usr/bin/env node
// bench/pool.mjs: a new session's first action with a warm pool.
//
// Through glassbox serve and the official MCP SDK's Streamable HTTP client, on the bench site:
//   - pooled first: the first browser_navigate of a new session (right after initialize) that took
//     a pooled browser (its result says "browser": "pooled");
//   - warm: a plain browser_navigate to the same page in that session afterwards (a warm browser);
//   - launched first: the first browser_navigate of a new session on a service without a pool
//     (its browser launches during the call);
// and initialize (connect) of each new session apart. Each round's session closes, and the next
// round starts once the pool refilled and a moment passed (the refill's launch is over). Besides
// the ratio of the medians, the median over sessions of first / that session's own warm median
// (paired: a machine whose load drifts during the run moves both alike).
//
//   node bench/pool.mjs [--rounds R] [--warm-per-round W] [--think-ms T] [--glassbox PATH] [--out FILE]
//        [--log FILE]
//
// The paired ratio is the figure to read on a busy machine: each round's first navigate is divided
// by the warm navigates of the same session, moments later, on the same browser; its median over
// R rounds (default 15), with the quartiles and how many rounds were at or below 1.3x. --log FILE
// appends the services' stderr (with GLASSBOX_LOG=debug: a timing line per call).
//
// --think-ms T waits T ms between initialize and the first navigate (an agent's think time; 0 by
// default: the first navigate follows initialize at once).
//
// Prints medians and ratios; writes JSON (default bench/results/pool.json).
import { writeFile, mkdir } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSite } from './lib/site-server.mjs';
import { median, percentile } from './lib/stats.mjs';
import { sleep, startServe, connect, navigate, stop } from './lib/serve.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');

function parseArgs(argv) {
  const o = { rounds: 15, warmPerRound: 3, log: null, thinkMs: 0, sessions: 2, glassbox: process.env.GLASSBOX_BIN || path.join(REPO, 'build', 'glassbox'),
    out: path.join(HERE, 'results', 'pool.json') };
  for (let i = 2; i < argv.length; i++) {
    const v = argv[i + 1];
    switch (argv[i]) {
      case '--rounds': o.rounds = Number(v); i++; break;
      case '--warm-per-round': o.warmPerRound = Number(v); i++; break;
      case '--think-ms': o.thinkMs = Number(v); i++; break;
      case '--glassbox': o.glassbox = path.resolve(v); i++; break;
      case '--out': o.out = path.resolve(v); i++; break;
      case '--log': o.log = path.resolve(v); i++; break;
      default: console.error(`unknown option ${argv[i]}`); process.exit(2);
    }
  }
  return o;
}

// The pool's ready count, from the admin listener's /healthz.
async function poolReady(svc) {
  const res = await fetch(`${svc.adminUrl}/healthz`);
  return JSON.parse(await res.text()).warm_pool.ready;
}

async function waitPool(svc, n, deadlineMs = 120000) {
  const until = Date.now() + deadlineMs;
  while ((await poolReady(svc)) < n) {
    if (Date.now() > until) throw new Error(`the warm pool did not fill in ${deadlineMs} ms`);
    await sleep(200);
  }
}

// One new session: initialize, its first navigate, then warm navigates to the same page.
async function oneSession(svc, url, warmCount, thinkMs) {
  const t0 = performance.now();
  const s = await connect(svc);
  const init = performance.now() - t0;
  if (thinkMs) await sleep(thinkMs);
  const first = await navigate(s.client, url);
  const warm = [];
  for (let i = 0; i < warmCount; i++) warm.push((await navigate(s.client, url)).ms);
  await s.transport.terminateSession().catch(() => {});
  return { init, first, warm };
}

async function measure(opts, site, pool) {
  const svc = await startServe(opts, pool);
  const r = { init: [], first: [], warm: [], paired: [], ready: [], browsers: {} };
  try {
    for (let i = 0; i < opts.rounds; i++) {
      if (pool) await waitPool(svc, pool);
      await sleep(3000); // the last launch (a refill, or the previous session's close) is over
      const one = await oneSession(svc, site.formUrl, pool ? opts.warmPerRound : 0, opts.thinkMs);
      r.init.push(one.init);
      r.ready.push(one.first.timeToReadyMs);
      r.first.push(one.first.ms);
      r.warm.push(...one.warm);
      if (one.warm.length) r.paired.push(one.first.ms / median(one.warm));
      r.browsers[one.first.browser || 'unknown'] = (r.browsers[one.first.browser || 'unknown'] || 0) + 1;
      console.error(`${pool ? 'pooled' : 'launched'} round ${i + 1}: first ${Math.round(one.first.ms)} ms ` +
        `(ready in ${one.first.timeToReadyMs} ms)` +
        (one.warm.length ? `, warm ${one.warm.map(Math.round).join('/')} ms` : ''));
    }
  } finally {
    await stop(svc, opts.log);
  }
  return r;
}

const ms = (x) => Math.round(x);

async function main() {
  const opts = parseArgs(process.argv);
  const site = await startSite(path.join(HERE, 'site'));
  try {
    const pooled = await measure(opts, site, 1);
    const launched = await measure(opts, site, 0);
    const m = {
      pooled_first_ms: ms(median(pooled.first)),
      warm_navigate_ms: ms(median(pooled.warm)),
      launched_first_ms: ms(median(launched.first)),
      pooled_initialize_ms: ms(median(pooled.init)),
      pooled_time_to_ready_ms: ms(median(pooled.ready)),
      launched_time_to_ready_ms: ms(median(launched.ready)),
      launched_initialize_ms: ms(median(launched.init)),
    };
    const report = {
      date: new Date().toISOString(), cores: os.cpus().length, rounds: opts.rounds, warm_per_round: opts.warmPerRound,
      think_ms: opts.thinkMs,
      medians: m,
      pooled_first_over_warm: Math.round((m.pooled_first_ms / m.warm_navigate_ms) * 100) / 100,
      pooled_first_over_warm_paired: Math.round(median(pooled.paired) * 100) / 100,
      pooled_paired_quartiles: [percentile(pooled.paired, 25), percentile(pooled.paired, 75)].map((x) => Math.round(x * 100) / 100),
      pooled_paired_rounds_at_or_below_1_3: pooled.paired.filter((x) => x <= 1.3).length,
      launched_first_over_warm: Math.round((m.launched_first_ms / m.warm_navigate_ms) * 100) / 100,
      browsers: { pooled: pooled.browsers, launched: launched.browsers },
      samples: { pooled, launched },
    };
    await mkdir(path.dirname(opts.out), { recursive: true });
    await writeFile(opts.out, JSON.stringify(report, null, 2));
    console.log(`a new session's first browser_navigate (bench site), medians of ${opts.rounds} sessions ` +
      `(warm: ${opts.rounds * opts.warmPerRound} navigates):`);
    console.log(`  pooled first ${m.pooled_first_ms} ms ${JSON.stringify(pooled.browsers)} | warm navigate ${m.warm_navigate_ms} ms | ` +
      `launched first ${m.launched_first_ms} ms ${JSON.stringify(launched.browsers)}`);
    console.log(`  pooled first / warm ${report.pooled_first_over_warm} (median of each session's first / its own warm median: ` +
      `${report.pooled_first_over_warm_paired}, quartiles ${report.pooled_paired_quartiles.join('-')}, ` +
      `${report.pooled_paired_rounds_at_or_below_1_3} of ${pooled.paired.length} rounds at or below 1.3) | ` +
      `launched first / warm ${report.launched_first_over_warm}`);
    console.log(`  initialize: pooled service ${m.pooled_initialize_ms} ms, service without a pool ${m.launched_initialize_ms} ms; ` +
      `time_to_ready_ms: pooled (the adoption) ${m.pooled_time_to_ready_ms}, launched ${m.launched_time_to_ready_ms}` +
      (opts.thinkMs ? `; ${opts.thinkMs} ms between initialize and the first navigate` : ''));
  } finally {
    await site.close();
  }
}

main().catch((err) => { console.error(err); process.exit(1); });
