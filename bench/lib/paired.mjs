// Paired rounds of the agent loop: every server's session is open at once and each round runs
// one iteration on each, in an order that rotates from round to round, so that a load that drifts
// during the run (other builds, other browsers) meets every server alike. Per round, each
// server's sum of its step times (think time excluded) is divided by the reference server's sum
// in the same round: the median of those per-round ratios is the figure, beside the ratio of the
// medians. Per step, the same per-round ratios.
import { runIteration, STEPS } from './loop.mjs';
import { summary, median, round } from './stats.mjs';

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const sum = (steps) => STEPS.reduce((a, s) => a + (steps[s] ?? NaN), 0);

// drivers: {name: driver} (started, warmed up); ref: the reference server's name (the floor).
// gapMs: a pause between two servers' iterations, so that one's work after its last answer (an
// evidence record) is done before the next one's loop starts. Returns {rounds, servers}.
export async function runPairedRounds(drivers, { ref, rounds, url, thinkMs = 0, gapMs = 500, log = () => {} }) {
  const names = Object.keys(drivers);
  const out = [];
  for (let i = 0; i < rounds; i++) {
    const order = names.map((_, k) => names[(i + k) % names.length]);
    const round_ = { order, servers: {} };
    for (const name of order) {
      try {
        const it = await runIteration(drivers[name], url, `paired-${i}-${Math.random().toString(36).slice(2, 7)}`, thinkMs);
        round_.servers[name] = { sum: sum(it.steps), total: it.total, steps: it.steps };
      } catch (err) {
        round_.servers[name] = { error: `${err.step ?? ''}: ${String(err.message || err).slice(0, 300)}` };
        log(`paired round ${i + 1}: ${name} failed at ${err.step}: ${err.message}`);
      }
      await sleep(gapMs);
    }
    const r = round_.servers[ref];
    log(`paired round ${i + 1} (${order.join(', ')}): ` + names.map((n) => {
      const s = round_.servers[n];
      return s.error ? `${n} failed` : `${n} ${Math.round(s.sum)} ms` + (n !== ref && r?.sum ? ` (${(s.sum / r.sum).toFixed(2)}x)` : '');
    }).join(', '));
    out.push(round_);
  }
  const servers = {};
  for (const name of names) {
    const ok = out.filter((x) => !x.servers[name].error && !x.servers[ref].error);
    const s = {
      sum: summary(out.filter((x) => !x.servers[name].error).map((x) => x.servers[name].sum)),
      loop: summary(out.filter((x) => !x.servers[name].error).map((x) => x.servers[name].total)),
      steps: Object.fromEntries(STEPS.map((st) => [st, summary(out.filter((x) => !x.servers[name].error).map((x) => x.servers[name].steps[st]))])),
      failed_rounds: out.length - out.filter((x) => !x.servers[name].error).length,
    };
    if (name !== ref) {
      const per = ok.map((x) => x.servers[name].sum / x.servers[ref].sum);
      s.over_ref = {
        per_round: per.map((v) => round(v, 3)),
        median_of_rounds: round(median(per), 2),
        rounds_at_or_below_1_5: per.filter((v) => v <= 1.5).length,
        steps: Object.fromEntries(STEPS.map((st) => [st, round(median(ok.map((x) => x.servers[name].steps[st] / x.servers[ref].steps[st])), 2)])),
      };
    }
    servers[name] = s;
  }
  return { rounds: out, servers };
}
