/*
 * Helpers of the verification tests: PNG decoding (to look at the
 * annotated evidence), the audit records of a data dir, and a CPU hog
 * bounded in time.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { assert, pollUntil, decodePng, auditRecords } from '../e2e/lib.mjs';

export { decodePng, auditRecords };

/* The tool_call record of an operation, once the record keeper wrote it. */
export async function recordOf(dataDir, operationId) {
  let rec = null;
  await pollUntil(() => {
    rec = auditRecords(dataDir).find((r) => r.kind === 'tool_call' && r.operation === operationId);
    return rec;
  });
  assert.ok(rec, `no audit record for ${operationId}`);
  return rec;
}

/* The bytes of an artifact of tenant "local". */
export async function artifactBytes(dataDir, sha) {
  const p = path.join(dataDir, 'tenants', 'local', 'artifacts', sha.slice(0, 2), sha);
  assert.ok(await pollUntil(() => fs.existsSync(p)), `artifact ${sha} was not stored`);
  return fs.readFileSync(p);
}

/* The number of pixels of colour rgb (exactly) along the outline just
 * outside box ({x, y, width, height} in CSS px, scale 1). */
export function outlinePixels(img, box, rgb) {
  let n = 0;
  const x0 = Math.round(box.x) - 2;
  const x1 = Math.round(box.x + box.width) + 1;
  const y0 = Math.round(box.y) - 2;
  const y1 = Math.round(box.y + box.height) + 1;
  const same = (x, y) => {
    if (x < 0 || y < 0 || x >= img.width || y >= img.height) return false;
    const p = img.px(x, y);
    return p[0] === rgb[0] && p[1] === rgb[1] && p[2] === rgb[2];
  };
  for (let x = x0; x <= x1; x++) n += same(x, y0) + same(x, y1);
  for (let y = y0; y <= y1; y++) n += same(x0, y) + same(x1, y);
  return n;
}

/*
 * Starts `n` processes that keep a core busy, each for at most `ms` (they
 * end on their own even if the test dies); returns a stop function.
 */
export function cpuHog(n = 1, ms = 20000) {
  const kids = [];
  for (let i = 0; i < n; i++) {
    kids.push(spawn(process.execPath, ['-e', `const end = Date.now() + ${ms}; let x = 0; while (Date.now() < end) x = (x * 31 + 7) % 1000003;`], { stdio: 'ignore' }));
  }
  return () => {
    for (const k of kids) if (k.exitCode === null) k.kill('SIGKILL');
  };
}
