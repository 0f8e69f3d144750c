/*
 * record.mjs - records the CDP traffic of one call of every browser tool
 * (sequence.mjs) on real Chromium, so that tests/replay/fake-chromium.mjs
 * can play a browser back to glassbox without one.
 *
 *   GLASSBOX_BIN=build/glassbox node tests/replay/record.mjs
 *
 * Writes fixtures/replay/tools.jsonl.gz: the trace glassbox writes with
 * GLASSBOX_CDP_TRACE ("> " sent, "< " received, one message per line),
 * the fixture site's port replaced by PORT so the replay can serve it on
 * any port. Re-record when the pipeline sends different calls.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { openGlassbox, startFixtureServer, ok, callTool, REPO_ROOT } from '../e2e/lib.mjs';
import { runSequence } from './sequence.mjs';

const traceDir = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-trace-'));
fs.chmodSync(traceDir, 0o777);
const fixture = await startFixtureServer();
const gb = await openGlassbox({ env: { GLASSBOX_CDP_TRACE: traceDir, GLASSBOX_BROWSER_USER: 'root' } });
try {
  await runSequence((tool, args, { mayFail } = {}) => (mayFail ? callTool(gb.client, tool, args) : ok(gb.client, tool, args)),
    (p) => fixture.url + p);
} finally {
  await gb.close();
  gb.removeDataDir();
  await fixture.close();
}
const files = fs.readdirSync(traceDir).map((f) => path.join(traceDir, f));
const biggest = files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0];
const port = new URL(fixture.url).port;
const text = fs.readFileSync(biggest, 'utf8').replaceAll(`127.0.0.1:${port}`, '127.0.0.1:PORT');
const out = path.join(REPO_ROOT, 'fixtures', 'replay', 'tools.jsonl.gz');
fs.writeFileSync(out, zlib.gzipSync(text, { level: 9 }));
fs.rmSync(traceDir, { recursive: true, force: true });
console.log(`recorded ${text.split('\n').length - 1} messages from ${files.length} connection(s) into ${out}`);
