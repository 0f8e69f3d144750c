#!/usr/bin/env node
// The files benchmark (bench/README.md, "Files"): what an upload and a download cost an agent,
// glassbox against Playwright MCP, over stdio with the official MCP SDK client, on the fixture
// site's upload form and download link (fixtures/files-routes.mjs; 127.0.0.1 only).
//
//   node bench/files.mjs [--iterations N] [--size-mb M] [--only glassbox,playwright] [--out FILE]
//
// Per iteration and server:
//   upload    browser_file_upload of an M MiB file on the open chooser (after a click on the
//             input), timed alone; the form is then sent and the fixture checks the sha256
//   download  browser_click on a link to an M MiB attachment, until the call returns; glassbox's
//             result must report it completed (kept as an artifact, hashed), Playwright's
//             must say it downloaded it
// Medians (and p95) in ms; ratio = glassbox / playwright. JSON to --out (default
// bench/results/files.json).
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import { readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { makeMcpDriver } from './lib/servers.mjs';
import { summary, ratio } from './lib/stats.mjs';
import { resultText } from './lib/loop.mjs';
import { startFixtureServer } from '../fixtures/server.mjs';

const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');

function args() {
  const a = { iterations: 10, sizeMb: 4, only: ['glassbox', 'playwright'], out: path.join(REPO_ROOT, 'bench', 'results', 'files.json') };
  const v = process.argv.slice(2);
  for (let i = 0; i < v.length; i++) {
    if (v[i] === '--iterations') a.iterations = Number(v[++i]);
    else if (v[i] === '--size-mb') a.sizeMb = Number(v[++i]);
    else if (v[i] === '--only') a.only = v[++i].split(',');
    else if (v[i] === '--out') a.out = v[++i];
    else throw new Error(`unknown option ${v[i]}`);
  }
  return a;
}

function filesUnder(dir) {
  const out = [];
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true }))
    if (e.isFile()) out.push(path.join(e.parentPath ?? e.path, e.name));
  return out;
}

/* Polls dir until a file not in had has size bytes (at most 30 s). */
async function arrived(dir, had, size) {
  const end = performance.now() + 30000;
  while (performance.now() < end) {
    if (filesUnder(dir).some((f) => !had.has(f) && statSync(f).size === size)) return true;
    await new Promise((r) => setTimeout(r, 5));
  }
  return false;
}

async function runServer(name, opt, site, bytes, sha) {
  const tmpBase = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-files-'));
  const glassboxBin = path.resolve(process.env.GLASSBOX_BIN || path.join(REPO_ROOT, 'build', 'glassbox'));
  const d = await makeMcpDriver(name, { repoRoot: REPO_ROOT, glassboxBin, tmpBase, chromium: '/usr/bin/chromium' });
  let file;
  if (name === 'glassbox') {
    // the upload area: the only place glassbox takes files from
    const src = path.join(tmpBase, 'bench.bin');
    await writeFile(src, bytes);
    execFileSync(glassboxBin, ['files', 'put', src, '--name', 'bench.bin', '--data-dir', d.adapter.env.GLASSBOX_DATA_DIR]);
    file = 'bench.bin';
  } else {
    await mkdir(d.adapter.cwd, { recursive: true });
    file = path.join(d.adapter.cwd, 'bench.bin');
    await writeFile(file, bytes);
  }
  const upload = [];
  const download = [];
  const size = bytes.length;
  await d.start();
  try {
    for (let i = 0; i < opt.iterations; i++) {
      await d.call('browser_navigate', { url: `${site.url}/files/upload.html` });
      await d.call('browser_click', { target: '#doc' });
      let t = performance.now();
      await d.call('browser_file_upload', { paths: [file] });
      upload.push(performance.now() - t);
      const before = site.uploads().length;
      await d.call('browser_click', { target: '#send' });
      const got = site.uploads().slice(before).find((u) => u.field === 'doc');
      if (!got || got.sha256 !== sha) throw new Error(`${name}: the server did not get the file's bytes`);

      await d.call('browser_navigate', { url: `${site.url}/files/download.html?size=${size}` });
      const had = new Set(filesUnder(d.adapter.cwd));
      t = performance.now();
      const res = await d.call('browser_click', { target: '#report' });
      let ok;
      if (name === 'glassbox') {
        ok = (res.structuredContent?.downloads || []).some((x) => x.state === 'completed' && x.size === size);
      } else {
        // Playwright MCP returns while the download runs ("Downloading file ..."): the time
        // until the whole file is in its output dir
        ok = /Download(ed|ing) file report\.pdf/.test(resultText(res)) && (await arrived(d.adapter.cwd, had, size));
      }
      download.push(performance.now() - t);
      if (!ok) throw new Error(`${name}: the download did not complete: ${resultText(res).slice(0, 300)}`);
      process.stderr.write(`${name}: iteration ${i + 1}/${opt.iterations}\n`);
    }
  } finally {
    await d.stop();
    await rm(tmpBase, { recursive: true, force: true });
  }
  return { upload: summary(upload), download: summary(download) };
}

const opt = args();
const site = await startFixtureServer();
const bytes = crypto.randomBytes(opt.sizeMb * 1024 * 1024);
const sha = crypto.createHash('sha256').update(bytes).digest('hex');
const results = {};
try {
  for (const name of opt.only) results[name] = await runServer(name, opt, site, bytes, sha);
} finally {
  await site.close();
}
const g = results.glassbox;
const p = results.playwright;
const out = {
  size_mb: opt.sizeMb,
  iterations: opt.iterations,
  results,
  ratio: g && p ? { upload: ratio(g.upload.median, p.upload.median), download: ratio(g.download.median, p.download.median) } : null,
};
console.log(`files bench: ${opt.sizeMb} MiB, ${opt.iterations} iterations (median / p95 ms)`);
for (const [name, r] of Object.entries(results))
  console.log(`  ${name.padEnd(10)} upload ${r.upload.median} / ${r.upload.p95}   download ${r.download.median} / ${r.download.p95}`);
if (out.ratio) console.log(`  ratio glassbox/playwright: upload ${out.ratio.upload}, download ${out.ratio.download}`);
await mkdir(path.dirname(opt.out), { recursive: true });
await writeFile(opt.out, JSON.stringify(out, null, 2));
