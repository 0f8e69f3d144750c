import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { McpDriver } from './lib/mcp-driver.mjs';
import { glassboxAdapter } from './lib/servers.mjs';
import { startSite } from './lib/site-server.mjs';
const REPO = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const tmpBase = await mkdtemp(path.join(os.tmpdir(), 'gbs-'));
const site = await startSite(path.join(REPO, 'bench', 'site'));
const a = await glassboxAdapter({ repoRoot: REPO, tmpBase, answerFirst: true, glassboxBin: process.env.BIN });
if (process.env.PERF) { a.args = ['record', '-F', '2000', '-g', '-o', '/tmp/gbx/perf.data', '--', a.command, ...a.args]; a.command = 'perf'; }
const d = new McpDriver(a);
await d.start();
await d.call('browser_navigate', { url: site.formUrl + '?rows=' + (process.env.ROWS || 1000) });
const ts = [];
for (let i = 0; i < Number(process.env.N || 8); i++) { const t = performance.now(); await d.call('browser_snapshot', {}); ts.push(performance.now() - t); }
ts.sort((x, y) => x - y);
console.log('snapshot median ms', ts[ts.length >> 1].toFixed(1));
await d.stop(); await site.close?.();
