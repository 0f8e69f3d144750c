#!/usr/bin/env node
// Token bench: the characters an agent receives over one whole agent loop, from glassbox in each
// snapshot mode (full, changed, none) and from Playwright MCP (pinned in package.json), on the
// same pages (bench/site/shop1.html, shop2.html), each over stdio with the official MCP SDK
// client. See bench/README.md, "Characters an agent receives".
//
//   bench/run.sh tokens [--runs N] [--only LIST] [--chromium PATH] [--glassbox PATH]
//
// The loop: open the shop, add two items to the cart, type a search, go to the next page, add a
// third item, read the cart count (it must say 3). After every action the agent needs the refs of
// the page as it is: it takes them from the answer's inline snapshot; when the answer links a
// snapshot file instead (Playwright MCP with an output directory) it reads the file; when the
// answer has none (snapshot mode none) it calls browser_snapshot. Counted: the text content of
// every answer and every snapshot file read (images and structuredContent are not counted).
import { mkdtemp, rm, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startSite } from './lib/site-server.mjs';
import { McpDriver } from './lib/mcp-driver.mjs';
import { glassboxAdapter, playwrightAdapter } from './lib/servers.mjs';
import { parseSnapshot } from './lib/loop.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const REPO = path.resolve(HERE, '..');
const ALL = ['glassbox-full', 'glassbox-changed', 'glassbox-none', 'playwright'];

function parseArgs(argv) {
  const o = {
    runs: 3, only: ALL, chromium: '/usr/bin/chromium',
    glassbox: process.env.GLASSBOX_BIN ? path.resolve(REPO, process.env.GLASSBOX_BIN) : path.join(REPO, 'build', 'glassbox'),
  };
  for (let i = 0; i < argv.length; i++) {
    const [a, inline] = argv[i].split('=', 2);
    const v = () => inline ?? argv[++i];
    if (a === '--runs') o.runs = Math.max(1, Number(v()) | 0);
    else if (a === '--only') o.only = v().split(',').filter(Boolean);
    else if (a === '--chromium') o.chromium = v();
    else if (a === '--glassbox') o.glassbox = path.resolve(v());
    else { console.error(`usage: bench/run.sh tokens [--runs N] [--only ${ALL.join(',')}] [--chromium PATH] [--glassbox PATH]`); process.exit(2); }
  }
  return o;
}

const textOf = (res) => (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');

/* The ### sections of an answer. */
function sections(text) {
  const out = {};
  for (const part of text.split(/^### /m).slice(1)) {
    const nl = part.indexOf('\n');
    out[part.slice(0, nl)] = part.slice(nl + 1).trim();
  }
  return out;
}

/* One loop; returns {chars, answerChars, fileChars, calls, ok}. */
async function loop(driver, adapter, site, mode) {
  const count = { answerChars: 0, fileChars: 0, calls: 0 };
  let known = new Map(); // ref -> {role, name}
  const call = async (name, args) => {
    const res = await driver.call(name, args);
    const text = textOf(res);
    count.answerChars += text.length;
    count.calls++;
    return text;
  };
  /* What the agent knows of the page after an answer. */
  const learn = async (text) => {
    const s = sections(text).Snapshot;
    let yaml;
    if (s === undefined) {
      yaml = sections(await call('browser_snapshot', {})).Snapshot || '';
      known = new Map();
    } else {
      const link = /^- \[Snapshot\]\(([^)]+)\)$/.exec(s);
      if (link) {
        yaml = await readFile(path.resolve(adapter.cwd, link[1]), 'utf8');
        count.fileChars += yaml.length;
        known = new Map();
      } else {
        yaml = s.replace(/^```yaml\n?/, '').replace(/\n?```$/, '');
        if (!/^# /.test(yaml)) known = new Map(); // a whole snapshot replaces; a change adds
        const gone = /^# gone: (.*)$/m.exec(yaml);
        for (const r of gone ? gone[1].split(' ') : []) known.delete(r);
      }
    }
    for (const e of parseSnapshot(yaml)) known.set(e.ref, e);
  };
  const ref = (role, name) => {
    for (const [r, e] of known) if (e.role === role && e.name === name) return r;
    throw new Error(`${driver.name}: no ${role} "${name}" known; known: ${[...known.values()].map((e) => e.name).join(', ').slice(0, 400)}`);
  };
  await learn(await call('browser_navigate', { url: site + '/shop1.html' }));
  await learn(await call('browser_click', { target: ref('button', 'Add Desk lamp to cart') }));
  await learn(await call('browser_click', { target: ref('button', 'Add Oak table to cart') }));
  await learn(await call('browser_type', { target: ref('searchbox', 'Search'), text: 'lamp' }));
  await learn(await call('browser_click', { target: ref('link', 'Next page') }));
  await learn(await call('browser_click', { target: ref('button', 'Add Mirror to cart') }));
  const cart = await call('browser_evaluate', { function: "() => document.getElementById('cart').textContent" });
  const ok = /"3"/.test(sections(cart).Result || '');
  return { ...count, chars: count.answerChars + count.fileChars, ok };
}

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s[Math.floor((s.length - 1) / 2)]; };

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const site = await startSite(path.join(HERE, 'site'));
  const tmpBase = await mkdtemp(path.join(os.tmpdir(), 'gb-tokens-'));
  const results = {};
  try {
    for (const name of o.only) {
      const runs = [];
      for (let i = 0; i < o.runs; i++) {
        const mode = name.startsWith('glassbox-') ? name.slice('glassbox-'.length) : null;
        const adapter = mode
          ? await glassboxAdapter({ repoRoot: REPO, glassboxBin: o.glassbox, glassboxArgs: [`--snapshot-mode=${mode}`], tmpBase })
          : await playwrightAdapter({ tmpBase, chromium: o.chromium });
        adapter.name = name;
        const driver = new McpDriver(adapter);
        try {
          await driver.start();
          runs.push(await loop(driver, adapter, site.origin, mode));
        } finally {
          await driver.stop?.();
          await adapter.cleanup();
        }
      }
      results[name] = {
        chars: median(runs.map((r) => r.chars)),
        answerChars: median(runs.map((r) => r.answerChars)),
        fileChars: median(runs.map((r) => r.fileChars)),
        calls: median(runs.map((r) => r.calls)),
        ok: runs.every((r) => r.ok),
        runs: runs.length,
      };
    }
  } finally {
    await site.close();
    await rm(tmpBase, { recursive: true, force: true });
  }
  console.log('server            chars (median)  in answers  in files read  calls  loop ok');
  for (const [name, r] of Object.entries(results))
    console.log(`${name.padEnd(18)}${String(r.chars).padStart(14)}${String(r.answerChars).padStart(12)}${String(r.fileChars).padStart(15)}${String(r.calls).padStart(7)}  ${r.ok}`);
  const pw = results.playwright?.chars;
  if (pw) for (const [name, r] of Object.entries(results)) if (name !== 'playwright') console.log(`${name} / playwright = ${(r.chars / pw).toFixed(2)}`);
  console.log(JSON.stringify({ runs: o.runs, results }));
}

main().catch((e) => { console.error(e); process.exit(1); });
