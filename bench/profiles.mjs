#!/usr/bin/env node
// bench/profiles.mjs: what keeping sealed profiles in the object store costs a profile's open and
// save, against keeping them in the data dir.
//
//   node bench/profiles.mjs [--rounds N] [--size-kib K] [--bin PATH] [--out FILE]
//
// build/profiles/profile_bench (bench/profile_bench.c) N rounds (default 20) of open for writing,
// K KiB (default 1024) of incompressible state written, seal and commit, close: once with the
// versions in the data dir, once in a local S3-API server (tests/e2e/s3_server.mjs: s3rver behind
// a front that checks Signature V4, on loopback), alternating three times so both see the same
// machine. Reported: the median and p95 of open and save each way, and the ratios object store /
// data dir of the medians. JSON: bench/results/profiles.json.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startS3 } from '../tests/e2e/s3_server.mjs';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

function arg(name, def) {
  const i = process.argv.indexOf(name);
  return i > 0 && process.argv[i + 1] ? process.argv[i + 1] : def;
}

const rounds = Number(arg('--rounds', '20'));
const sizeKib = Number(arg('--size-kib', '1024'));
const bin = arg('--bin', path.join(ROOT, 'build', 'profiles', 'profile_bench'));
const out = arg('--out', path.join(ROOT, 'bench', 'results', 'profiles.json'));

/* One run of the C bench (not execFileSync: the S3 front runs in this process). */
function run(args) {
  return new Promise((resolve, reject) => {
    const p = spawn(bin, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, GLASSBOX_MASTER_KEY_FILE: masterKey } });
    let stdout = '';
    let stderr = '';
    p.stdout.on('data', (d) => (stdout += d));
    p.stderr.on('data', (d) => (stderr += d));
    p.on('exit', (code) => (code === 0 ? resolve(JSON.parse(stdout)) : reject(new Error(`profile_bench ${args.join(' ')}: ${stderr}`))));
  });
}

const median = (v) => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)];

const work = mkdtempSync(path.join(os.tmpdir(), 'gb-bench-profiles-'));
// one master key for every run, as replicas share one (each run has a data dir of its own)
const masterKey = path.join(work, 'master.key');
writeFileSync(masterKey, crypto.randomBytes(32).toString('hex') + '\n', { mode: 0o600 });
const s3 = await startS3({ bucket: 'bench' });
try {
  writeFileSync(path.join(work, 'akid'), s3.accessKeyId + '\n', { mode: 0o600 });
  writeFileSync(path.join(work, 'secret'), s3.secretAccessKey + '\n', { mode: 0o600 });
  const config = path.join(work, 'serve.json');
  writeFileSync(config, JSON.stringify({ object_store: { s3: { endpoint: s3.endpoint, bucket: 'bench', path_style: true, access_key_id_file: path.join(work, 'akid'), secret_access_key_file: path.join(work, 'secret') } } }), { mode: 0o600 });
  const runs = { data_dir: [], object_store: [] };
  for (let i = 0; i < 3; i++) {
    runs.data_dir.push(await run([String(rounds), String(sizeKib)]));
    runs.object_store.push(await run([String(rounds), String(sizeKib), config]));
  }
  // the median over the three runs of each run's median (and p95)
  const agg = (where, k, q) => median(runs[where].map((r) => r[k][q]));
  const result = { rounds, size_kib: sizeKib, runs: 3 };
  for (const where of ['data_dir', 'object_store'])
    result[where] = { open_us: { median: agg(where, 'open_us', 'median'), p95: agg(where, 'open_us', 'p95') }, save_us: { median: agg(where, 'save_us', 'median'), p95: agg(where, 'save_us', 'p95') } };
  result.ratio_of_medians = {
    open: +(result.object_store.open_us.median / result.data_dir.open_us.median).toFixed(2),
    save: +(result.object_store.save_us.median / result.data_dir.save_us.median).toFixed(2),
  };
  for (const k of ['open', 'save'])
    console.log(`profile ${k} (${sizeKib} KiB): median ${result.data_dir[`${k}_us`].median} us (data dir), ${result.object_store[`${k}_us`].median} us (object store), ratio ${result.ratio_of_medians[k]}`);
  mkdirSync(path.dirname(out), { recursive: true });
  writeFileSync(out, JSON.stringify(result, null, 2) + '\n');
} finally {
  await s3.stop();
  rmSync(work, { recursive: true, force: true });
}
