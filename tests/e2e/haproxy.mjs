/*
 * haproxy.mjs - HAProxy (Debian's) with the shipped config,
 * deploy/haproxy/haproxy.cfg, in front of glassbox replicas on loopback.
 *
 *   const lb = await startHaproxy({ r1: {port, adminPort}, r2: ..., r3: ... });
 *   lb.url ('http://127.0.0.1:PORT/mcp'), await lb.stop()
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { REPO_ROOT, pollUntil } from './lib.mjs';

/* A port nobody listens on right now. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

export async function startHaproxy(replicas) {
  const port = await freePort();
  const env = { ...process.env, GLASSBOX_LISTEN: `127.0.0.1:${port}` };
  for (const [name, r] of Object.entries(replicas)) {
    const n = name.toUpperCase();
    env[`GLASSBOX_${n}`] = `127.0.0.1:${r.port}`;
    env[`GLASSBOX_${n}_ADMIN_PORT`] = String(r.adminPort);
  }
  const proc = spawn('haproxy', ['-db', '-f', path.join(REPO_ROOT, 'deploy', 'haproxy', 'haproxy.cfg')], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let log = '';
  proc.stdout.on('data', (d) => (log += d));
  proc.stderr.on('data', (d) => (log += d));
  const exited = new Promise((resolve) => proc.on('exit', (code, signal) => resolve({ code, signal })));
  const up = await pollUntil(
    () =>
      new Promise((resolve) => {
        const c = net.connect(port, '127.0.0.1', () => {
          c.end();
          resolve(true);
        });
        c.on('error', () => resolve(false));
      }),
    { deadlineMs: 30000, intervalMs: 200 }
  );
  if (!up) {
    proc.kill('SIGKILL');
    throw new Error(`haproxy did not start:\n${log}`);
  }
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    log: () => log,
    async stop() {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
      await exited;
    },
  };
}
