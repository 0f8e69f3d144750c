/*
 * What the trace, HAR and session-export tests share: running a command,
 * reading a zip, opening a trace in Playwright's own trace viewer, checking
 * a HAR against the HAR 1.2 schema, and running an exported spec with
 * Playwright Test on a plain Chromium. Playwright's packages, har-schema
 * and ajv are the pinned dev dependencies of tests/e2e.
 */
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { assert, REPO_ROOT } from '../e2e/lib.mjs';

const E2E = path.join(REPO_ROOT, 'tests', 'e2e');
export const requireDev = createRequire(path.join(E2E, 'package.json'));
const PLAYWRIGHT_CORE = path.dirname(requireDev.resolve('playwright-core/package.json'));
const PLAYWRIGHT_TEST = path.dirname(requireDev.resolve('@playwright/test/package.json'));
export const CHROMIUM = process.env.GLASSBOX_CHROMIUM || '/usr/bin/chromium';

/* Runs cmd; resolves {code, stdout, stderr}. The deadline is generous: the
 * machine may be busy. */
export function exec(cmd, args, { env = {}, cwd } = {}) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => { stdout += d; });
    child.stderr.on('data', (d) => { stderr += d; });
    const timer = setTimeout(() => child.kill('SIGKILL'), 240000);
    child.on('error', reject);
    child.on('close', (code) => { clearTimeout(timer); resolve({ code, stdout, stderr }); });
  });
}

/* Every entry of a zip, by name, read with the system's unzip. */
export async function zipEntries(file) {
  const list = await exec('unzip', ['-Z1', file]);
  assert.equal(list.code, 0, `unzip lists ${file}: ${list.stderr}`);
  const entries = {};
  for (const name of list.stdout.split('\n').filter(Boolean)) {
    entries[name] = await new Promise((resolve, reject) => {
      const c = spawn('unzip', ['-p', file, name]);
      const parts = [];
      c.stdout.on('data', (d) => parts.push(d));
      c.on('error', reject);
      c.on('close', () => resolve(Buffer.concat(parts)));
    });
  }
  return entries;
}

/* Opens zip in Playwright's trace viewer (playwright-core's show-trace
 * server on loopback) in headless Chromium; calls fn(page), then closes. */
export async function inTraceViewer(zip, fn) {
  const { chromium } = requireDev('playwright-core');
  const server = spawn(process.execPath, [path.join(PLAYWRIGHT_CORE, 'cli.js'), 'show-trace', '--host', '127.0.0.1',
    '--port', '0', zip], { stdio: ['ignore', 'pipe', 'pipe'] });
  let browser;
  try {
    const url = await new Promise((resolve, reject) => {
      let out = '';
      server.stdout.on('data', (d) => {
        out += d;
        const m = out.match(/Listening on (\S+)/);
        if (m) resolve(m[1]);
      });
      server.on('close', (code) => reject(new Error(`show-trace exited ${code}: ${out}`)));
    });
    browser = await chromium.launch({ executablePath: CHROMIUM });
    const page = await browser.newPage({ viewport: { width: 1600, height: 1000 } });
    await page.goto(url);
    await fn(page);
  } finally {
    await browser?.close();
    server.kill();
  }
}

/* A validator of HAR 1.2 documents (har-schema, ajv). */
export function harValidator() {
  const Ajv = requireDev('ajv');
  const addFormats = requireDev('ajv-formats');
  const ajv = new Ajv({ allErrors: true, strict: false });
  ajv.addMetaSchema(requireDev('ajv/dist/refs/json-schema-draft-06.json'));
  addFormats(ajv);
  for (const schema of Object.values(requireDev('har-schema'))) ajv.addSchema(schema);
  return ajv.getSchema('har.json#');
}

/* Runs the spec file (in dir, which it prepares) with Playwright Test on
 * a plain Chromium that maps shop.test to loopback; resolves exec's
 * result. */
export async function runSpec(dir, env = {}) {
  if (!fs.existsSync(path.join(dir, 'node_modules'))) fs.symlinkSync(path.join(E2E, 'node_modules'), path.join(dir, 'node_modules'));
  fs.writeFileSync(path.join(dir, 'playwright.config.mjs'), `export default {
  testDir: '.', timeout: 120000, expect: { timeout: 30000 }, workers: 1, reporter: 'list',
  use: { launchOptions: { executablePath: ${JSON.stringify(CHROMIUM)},
    args: ['--host-resolver-rules=MAP shop.test 127.0.0.1'] } },
};\n`);
  return exec(process.execPath, [path.join(PLAYWRIGHT_TEST, 'cli.js'), 'test', '--config', 'playwright.config.mjs'],
    { cwd: dir, env: { PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', CI: '1', ...env } });
}
