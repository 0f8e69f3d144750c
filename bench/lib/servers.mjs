// Adapters: how to start each MCP server and how its tools are named and called.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';
import { McpDriver } from './mcp-driver.mjs';

const require = createRequire(import.meta.url);
const REPO_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..');

// Browser flags for every server that lets us pass them (there is no network here).
export const QUIET_FLAGS = [
  '--disable-background-networking',
  '--disable-component-update',
  '--no-first-run',
  '--disable-sync',
];

function baseEnv(tmp) {
  const env = { PATH: process.env.PATH, HOME: process.env.HOME || '/root', TMPDIR: tmp, LANG: 'C.UTF-8' };
  if (process.env.XDG_RUNTIME_DIR) env.XDG_RUNTIME_DIR = process.env.XDG_RUNTIME_DIR;
  return env;
}

const pkgBin = (pkg, rel) => path.join(path.dirname(require.resolve(`${pkg}/package.json`)), rel);

// egressOff: every egress layer off (tool URL checks, CDP Fetch, the proxy, the network
// namespace), through the policy's "egress_layers" switch: the "noegress" server, the baseline
// that the egress layers' cost is measured against.
// answerFirst: the answer leaves as soon as the page is re-read and verified; the evidence
// screenshot is taken right after, before the next call (policy evidence.before_answer false).
// name: the server's name in the results, when not the one its flags give it.
export async function glassboxAdapter({ repoRoot, glassboxBin, glassboxArgs = [], tmpBase, egressOff = false, answerFirst = false, name }) {
  const bin = glassboxBin || path.join(repoRoot, 'build', 'glassbox');
  if (!existsSync(bin)) throw new Error(`${bin} does not exist (build glassbox first)`);
  const tmp = await mkdtemp(path.join(tmpBase, 'glassbox-'));
  const dataDir = await mkdtemp(path.join(tmp, 'data-'));
  let config = path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json');
  if (egressOff || answerFirst) {
    const policy = JSON.parse(await readFile(config, 'utf8'));
    if (egressOff) policy.egress_layers = { tool: false, fetch: false, proxy: false, netns: false };
    if (answerFirst) policy.evidence = { before_answer: false };
    config = path.join(tmp, 'policy-variant.json');
    await writeFile(config, JSON.stringify(policy));
  }
  return {
    name: name || (egressOff ? 'noegress' : answerFirst ? 'answerfirst' : 'glassbox'),
    command: bin,
    args: ['mcp', ...glassboxArgs],
    // the bench site is on loopback, which glassbox's default policy refuses
    env: {
      ...baseEnv(tmp),
      GLASSBOX_DATA_DIR: dataDir,
      GLASSBOX_CONFIG: config,
      // GLASSBOX_BROWSER_USER=root runs the browser without its sandbox: an A/B of the sandbox's cost
      ...(process.env.GLASSBOX_BROWSER_USER ? { GLASSBOX_BROWSER_USER: process.env.GLASSBOX_BROWSER_USER } : {}),
    },
    cwd: tmp,
    navigate: (url) => ['browser_navigate', { url }],
    snapshot: () => ['browser_snapshot', {}],
    type: (ref, text) => ['browser_type', { target: ref, text }],
    click: (ref) => ['browser_click', { target: ref }],
    evaluate: (fn) => ['browser_evaluate', { function: fn }],
    screenshot: () => ['browser_take_screenshot', {}],
    cleanup: () => rm(tmp, { recursive: true, force: true }),
  };
}

export async function playwrightAdapter({ tmpBase, chromium }) {
  const tmp = await mkdtemp(path.join(tmpBase, 'playwright-'));
  const config = path.join(tmp, 'config.json');
  // The CLI has no flag for browser arguments; the config file's launchOptions.args carries them.
  await writeFile(config, JSON.stringify({ browser: { launchOptions: { args: QUIET_FLAGS } } }));
  return {
    name: 'playwright',
    command: process.execPath,
    args: [
      pkgBin('@playwright/mcp', 'cli.js'),
      '--config', config,
      '--headless', '--isolated', '--no-sandbox',
      '--executable-path', chromium,
      '--output-dir', path.join(tmp, 'output'),
    ],
    env: { ...baseEnv(tmp), PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1' },
    cwd: tmp,
    navigate: (url) => ['browser_navigate', { url }],
    snapshot: () => ['browser_snapshot', {}],
    type: (ref, text) => ['browser_type', { target: ref, text }],
    click: (ref) => ['browser_click', { target: ref }],
    evaluate: (fn) => ['browser_evaluate', { function: fn }],
    screenshot: () => ['browser_take_screenshot', { type: 'png' }],
    cleanup: () => rm(tmp, { recursive: true, force: true }),
  };
}

export async function devtoolsAdapter({ tmpBase, chromium }) {
  const tmp = await mkdtemp(path.join(tmpBase, 'devtools-'));
  const withPage = (d, args) => (d.pageId === undefined ? args : { pageId: d.pageId, ...args });
  return {
    name: 'devtools',
    command: process.execPath,
    args: [
      pkgBin('chrome-devtools-mcp', 'build/src/bin/chrome-devtools-mcp.js'),
      '--headless', '--isolated',
      '--executablePath', chromium,
      '--chromeArg=--no-sandbox', '--chromeArg=--disable-setuid-sandbox',
      ...QUIET_FLAGS.map((f) => `--chromeArg=${f}`),
      '--no-usage-statistics', '--no-performance-crux',
    ],
    env: {
      ...baseEnv(tmp),
      CHROME_DEVTOOLS_MCP_NO_USAGE_STATISTICS: '1',
      CHROME_DEVTOOLS_MCP_NO_UPDATE_CHECKS: '1',
    },
    cwd: tmp,
    // Page-scoped tools require a pageId (default --page-id-routing): list_pages gives it, as a
    // client would get it. This call is where the server launches Chromium, inside the cold start.
    afterConnect: async (d) => {
      const res = await d.call('list_pages', {});
      const text = (res.content || []).filter((c) => c.type === 'text').map((c) => c.text).join('\n');
      const m = /^\s*(\d+):.*\[selected\]/m.exec(text) || /^\s*(\d+):/m.exec(text);
      if (!m) throw new Error(`list_pages: no page id in ${JSON.stringify(text.slice(0, 300))}`);
      d.pageId = Number(m[1]);
    },
    navigate: (url, d) => ['navigate_page', withPage(d, { type: 'url', url })],
    snapshot: (d) => ['take_snapshot', withPage(d, {})],
    type: (ref, text, d) => ['fill', withPage(d, { uid: ref, value: text })],
    click: (ref, d) => ['click', withPage(d, { uid: ref })],
    evaluate: (fn, d) => ['evaluate_script', withPage(d, { function: fn })],
    screenshot: (d) => ['take_screenshot', withPage(d, { format: 'png' })],
    cleanup: () => rm(tmp, { recursive: true, force: true }),
  };
}

export async function makeMcpDriver(name, ctx) {
  const make = {
    glassbox: glassboxAdapter,
    noegress: (c) => glassboxAdapter({ ...c, egressOff: true }),
    answerfirst: (c) => glassboxAdapter({ ...c, answerFirst: true }),
    // the same, with another glassbox binary (--baseline): two builds side by side in one run
    'answerfirst-base': (c) => {
      if (!c.baselineBin) throw new Error('answerfirst-base needs --baseline PATH');
      return glassboxAdapter({ ...c, glassboxBin: c.baselineBin, answerFirst: true, name: 'answerfirst-base' });
    },
    playwright: playwrightAdapter,
    devtools: devtoolsAdapter,
  }[name];
  return new McpDriver(await make(ctx));
}
