// glassbox serve for the benches: a start with one tenant ("bench") and a warm pool, an SDK
// Streamable HTTP client, a timed browser_navigate, a stop that leaves nothing.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import { appendFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { killTree } from './proc.mjs';

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// Starts glassbox serve with one tenant and the given warm pool (opts.glassbox, opts.sessions: the
// session limit is that plus 4); resolves {url, adminUrl, adminToken, token, proc, dir, stderr}.
export async function startServe(opts, pool) {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'gb-bench-serve-'));
  const token = crypto.randomBytes(24).toString('hex');
  const adminToken = crypto.randomBytes(24).toString('hex');
  const policy = { egress: { allow_private: ['127.0.0.1:*', '[::1]:*'] }, risk: { evaluate: 'allow' } };
  const config = {
    listen: { host: '127.0.0.1', port: 0 },
    limits: { max_sessions: opts.sessions + 4, idle_ttl_s: 3600 },
    warm_pool: pool,
    tenants: { bench: { token_sha256: crypto.createHash('sha256').update(token).digest('hex'), policy,
      max_sessions: opts.sessions + 4 } },
    admin: { host: '127.0.0.1', port: 0, token_sha256: crypto.createHash('sha256').update(adminToken).digest('hex') },
  };
  const cfg = path.join(dir, 'serve.json');
  await writeFile(cfg, JSON.stringify(config), { mode: 0o600 });
  const proc = spawn(opts.glassbox, ['serve', '--config', cfg], {
    // GLASSBOX_LOG=debug in the bench's environment: one timing line per call (docs/internals/pipeline.md)
    env: { ...process.env, GLASSBOX_DATA_DIR: path.join(dir, 'data'), GLASSBOX_LOG: process.env.GLASSBOX_LOG || 'warn' },
    stdio: ['ignore', 'ignore', 'pipe'], detached: true,
  });
  let stderr = '';
  proc.stderr.on('data', (d) => { stderr += d; });
  const adminRe = /admin on http:\/\/127\.0\.0\.1:(\d+)\//;
  for (let i = 0; i < 300 && !(/MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.test(stderr) && adminRe.test(stderr)); i++) await sleep(50);
  const port = (stderr.match(/MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/) || [])[1];
  const adminPort = (stderr.match(adminRe) || [])[1];
  if (!port || !adminPort) throw new Error(`glassbox serve did not start:\n${stderr}`);
  return { url: `http://127.0.0.1:${port}/mcp`, adminUrl: `http://127.0.0.1:${adminPort}`, adminToken, token, proc,
    dir, stderr: () => stderr };
}

// An SDK client of the bench tenant, initialized.
export async function connect(svc) {
  const transport = new StreamableHTTPClientTransport(new URL(svc.url), {
    requestInit: { headers: { Authorization: `Bearer ${svc.token}` } },
  });
  const client = new Client({ name: 'bench-serve', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

// browser_navigate to url: {ms, browser, timeToReadyMs} (the last two on a session's first call:
// "pooled" or "launched", and the launch or adoption time).
export async function navigate(client, url) {
  const t0 = performance.now();
  const r = await client.callTool({ name: 'browser_navigate', arguments: { url } }, undefined, { timeout: 120000 });
  const ms = performance.now() - t0;
  if (r.isError) throw new Error(`navigate failed: ${JSON.stringify(r.content).slice(0, 300)}`);
  return { ms, browser: r.structuredContent?.browser, timeToReadyMs: r.structuredContent?.time_to_ready_ms };
}

// SIGTERM, then whatever is left of its process group; the data dir goes. logFile: where its
// stderr goes (appended), or none.
export async function stop(svc, logFile) {
  svc.proc.kill('SIGTERM');
  await Promise.race([new Promise((r) => svc.proc.on('exit', r)), sleep(60000)]);
  await killTree(svc.proc.pid, { rootIsGroupLeader: true }).catch(() => {});
  await rm(svc.dir, { recursive: true, force: true });
  if (logFile) await appendFile(logFile, svc.stderr());
}
