/*
 * postgres_helpers.mjs - a throwaway PostgreSQL server for a test file:
 * tests/postgres/run.sh (initdb in a temporary dir, a unix socket only,
 * as the postgres user when root) kept running until stop(), and psql
 * against it.
 *
 *   const pg = await startPostgres();   // {url, query(sql) -> rows, stop()}
 */
import { spawn, execFileSync } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT, pollUntil } from '../e2e/lib.mjs';

export async function startPostgres() {
  const proc = spawn(path.join(REPO_ROOT, 'tests', 'postgres', 'run.sh'),
    ['sh', '-c', 'echo "url=$GB_TEST_POSTGRES"; read _'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { err += d; });
  const exited = new Promise((resolve) => proc.on('exit', resolve));
  const url = await pollUntil(() => (out.match(/url=(\S+)/) || [])[1], { deadlineMs: 180000, intervalMs: 200 });
  if (!url) {
    proc.kill('SIGTERM');
    throw new Error(`the PostgreSQL server did not start:\n${err}`);
  }
  return {
    url,
    /* Rows of a query, each an array of column texts (psql -At). */
    query(sql) {
      const text = execFileSync('psql', [url, '-v', 'ON_ERROR_STOP=1', '-At', '-F', '\t', '-c', sql], { encoding: 'utf8' });
      return text.split('\n').filter((l) => l.length).map((l) => l.split('\t'));
    },
    async stop() {
      proc.stdin.end();
      await exited;
    },
  };
}
