#!/usr/bin/env node
// tools/list bench: what discovering the tools costs an agent on the official MCP SDK client, for
// each server, over stdio. The SDK client compiles every tool's outputSchema (ajv) when it lists
// the tools, so the time is the server's answer plus that compile. See bench/README.md, "Listing
// the tools".
//
//   bench/run.sh list-tools [--runs N] [--repeats R] [--only LIST] [--baseline PATH] [--chromium PATH]
//
// Each run starts each server with a fresh client and calls listTools R+1 times: the first call
// (what an agent pays once per connection) and the median of the R after it (a client listing
// again, e.g. on notifications/tools/list_changed). Reported: medians over the runs, and the
// response's size in bytes.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { McpDriver } from './lib/mcp-driver.mjs';
import { glassboxAdapter, playwrightAdapter, devtoolsAdapter } from './lib/servers.mjs';
import { median, round } from './lib/stats.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const ALL = ['glassbox', 'glassbox-base', 'glassbox-plain', 'playwright', 'devtools'];

function parseArgs(argv) {
  const o = { runs: 5, repeats: 10, only: ALL.filter((s) => s !== 'glassbox-base'), chromium: '/usr/bin/chromium', baseline: null };
  for (let i = 0; i < argv.length; i++) {
    const [a, inline] = argv[i].split('=', 2);
    const v = () => inline ?? argv[++i];
    if (a === '--runs') o.runs = Math.max(1, Number(v()) | 0);
    else if (a === '--repeats') o.repeats = Math.max(1, Number(v()) | 0);
    else if (a === '--only') o.only = v().split(',').filter(Boolean);
    else if (a === '--baseline') o.baseline = path.resolve(v());
    else if (a === '--chromium') o.chromium = v();
    else { console.error(`usage: bench/run.sh list-tools [--runs N] [--repeats R] [--only ${ALL.join(',')}] [--baseline PATH] [--chromium PATH]`); process.exit(2); }
  }
  if (o.baseline && !o.only.includes('glassbox-base')) o.only.push('glassbox-base');
  if (o.only.includes('glassbox-base') && !o.baseline) { console.error('glassbox-base needs --baseline PATH'); process.exit(2); }
  return o;
}

/* The adapter of server name: glassbox (this build), glassbox-base (--baseline), glassbox-plain
 * (this build with --no-structured-content: no outputSchema), or a peer. */
function adapterOf(name, o, tmpBase) {
  const gb = { repoRoot: REPO, tmpBase };
  if (name === 'glassbox') return glassboxAdapter(gb);
  if (name === 'glassbox-base') return glassboxAdapter({ ...gb, glassboxBin: o.baseline, name });
  if (name === 'glassbox-plain') return glassboxAdapter({ ...gb, glassboxArgs: ['--no-structured-content'], name });
  if (name === 'playwright') return playwrightAdapter({ tmpBase, chromium: o.chromium });
  if (name === 'devtools') return devtoolsAdapter({ tmpBase, chromium: o.chromium });
  throw new Error(`unknown server ${name}`);
}

/* One run of one server: {first, again, bytes, tools}. */
async function measure(name, o, tmpBase) {
  const adapter = await adapterOf(name, o, tmpBase);
  delete adapter.afterConnect; // listing needs no page
  const d = new McpDriver(adapter);
  try {
    await d.start();
    const times = [];
    let res;
    for (let i = 0; i <= o.repeats; i++) {
      const t = performance.now();
      res = await d.client.listTools();
      times.push(performance.now() - t);
    }
    return { first: times[0], again: median(times.slice(1)), bytes: Buffer.byteLength(JSON.stringify(res)), tools: res.tools.length };
  } finally {
    await d.stop();
  }
}

const o = parseArgs(process.argv.slice(2));
const tmpBase = await mkdtemp(path.join(os.tmpdir(), 'glassbox-list-tools-'));
const by = Object.fromEntries(o.only.map((n) => [n, []]));
try {
  for (let r = 0; r < o.runs; r++)
    for (const name of o.only) by[name].push(await measure(name, o, tmpBase));
} finally {
  await rm(tmpBase, { recursive: true, force: true });
}
console.log(`listTools on the official MCP SDK client, medians of ${o.runs} runs (ms)`);
console.log('server'.padEnd(16) + 'tools'.padStart(6) + 'bytes'.padStart(9) + 'first'.padStart(9) + 'again'.padStart(9));
for (const name of o.only) {
  const rs = by[name];
  console.log(name.padEnd(16) + String(rs[0].tools).padStart(6) + String(rs[0].bytes).padStart(9) +
    String(round(median(rs.map((x) => x.first)))).padStart(9) + String(round(median(rs.map((x) => x.again)))).padStart(9));
}
