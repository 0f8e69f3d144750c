// bench/fill-form.mjs: filling a six-field form (bench/site/signup.html: two textboxes, a
// checkbox, a radio button, a combobox, a slider) with one browser_fill_form call, on glassbox
// and on Playwright MCP, and on glassbox also field by field (browser_type, browser_click,
// browser_select_option: six calls). Each iteration navigates to a fresh copy of the page first
// (not measured). Medians over --iterations (default 10), ratios to Playwright MCP; JSON to
// bench/results/fill-form.json.
//
//   node bench/fill-form.mjs [--iterations N] [--glassbox PATH] [--chromium PATH]
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { startSite } from './lib/site-server.mjs';
import { makeMcpDriver } from './lib/servers.mjs';
import { median, ratio, round } from './lib/stats.mjs';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const REPO = path.resolve(HERE, '..');
const arg = (name, dflt) => {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? process.argv[i + 1] : dflt;
};
const iterations = Number(arg('iterations', 10));
const FIELDS = [
  { name: 'Full name', type: 'textbox', target: '#name', value: 'Ada Lovelace' },
  { name: 'Email', type: 'textbox', target: '#email', value: 'ada@example.test' },
  { name: 'I accept the terms', type: 'checkbox', target: '#terms', value: 'true' },
  { name: 'Pro', type: 'radio', target: '#plan-pro', value: 'true' },
  { name: 'Country', type: 'combobox', target: '#country', value: 'Japan' },
  { name: 'Volume', type: 'slider', target: '#volume', value: '7' },
];
const CHECK = `() => { const $ = (id) => document.getElementById(id);
  return [$('name').value, $('email').value, $('terms').checked, $('plan-pro').checked, $('country').value,
    $('volume').value].join('|'); }`;
const WANT = 'Ada Lovelace|ada@example.test|true|true|jp|7';

// The same six fields, one tool call each, on glassbox.
async function fieldByField(d) {
  await d.call('browser_type', { target: '#name', text: 'Ada Lovelace' });
  await d.call('browser_type', { target: '#email', text: 'ada@example.test' });
  await d.call('browser_click', { target: '#terms' });
  await d.call('browser_click', { target: '#plan-pro' });
  await d.call('browser_select_option', { target: '#country', values: ['Japan'] });
  await d.call('browser_type', { target: '#volume', text: '7' });
}

async function measure(d, url, how) {
  const times = [];
  for (let i = 0; i < iterations; i++) {
    await d.call('browser_navigate', { url: `${url}?i=${i}` });
    const t0 = performance.now();
    if (how === 'one call') await d.call('browser_fill_form', { fields: FIELDS });
    else await fieldByField(d);
    times.push(performance.now() - t0);
    const res = await d.call('browser_evaluate', { function: CHECK });
    const text = (res.content || []).map((c) => c.text || '').join('');
    if (!text.includes(WANT)) throw new Error(`${d.name} (${how}): the form holds ${text.slice(-400)}`);
  }
  return times;
}

const tmpBase = await mkdtemp(path.join(os.tmpdir(), 'glassbox-bench-fill-'));
const site = await startSite(path.join(HERE, 'site'));
const url = `${site.formUrl}signup.html`;
const ctx = { tmpBase, chromium: arg('chromium', '/usr/bin/chromium'), repoRoot: REPO, glassboxBin: path.resolve(arg('glassbox', process.env.GLASSBOX_BIN || path.join(REPO, 'build', 'glassbox'))) };
const rows = [];
try {
  for (const [server, how] of [['glassbox', 'one call'], ['glassbox', 'six calls'], ['playwright', 'one call']]) {
    const d = await makeMcpDriver(server, ctx);
    try {
      await d.start();
      await d.call('browser_navigate', { url }); // the browser's start is not measured
      const times = await measure(d, url, how);
      rows.push({ server, how, n: times.length, median_ms: round(median(times)) });
      process.stderr.write(`${server} (${how}): median ${round(median(times))} ms\n`);
    } finally {
      await d.stop();
    }
  }
} finally {
  await site.close?.();
  await rm(tmpBase, { recursive: true, force: true });
}
const pw = rows.find((r) => r.server === 'playwright').median_ms;
for (const r of rows) r.ratio_to_playwright = ratio(r.median_ms, pw);
console.table(rows);
await mkdir(path.join(HERE, 'results'), { recursive: true });
await writeFile(path.join(HERE, 'results', 'fill-form.json'), JSON.stringify({ iterations, rows }, null, 2));
