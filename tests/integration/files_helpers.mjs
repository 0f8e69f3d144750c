/*
 * files_helpers.mjs - what the files tests share (files_*.test.mjs): files
 * put in a tenant's upload area with the real `glassbox files put`, the
 * bytes of a resource read back over MCP, the audit records of a kind.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { glassboxBin, auditRecords } from '../e2e/lib.mjs';

export const sha256 = (buf) => crypto.createHash('sha256').update(buf).digest('hex');

/* Writes bytes to a temp file and puts it in dataDir's upload area of
 * tenant as name, with the real `glassbox files put`; returns {name,
 * bytes, sha256}. putFile: tenant local. */
export function putFileFor(dataDir, tenant, name, bytes) {
  fs.mkdirSync(dataDir, { recursive: true });
  const src = path.join(dataDir, `.src-${name}`);
  fs.writeFileSync(src, bytes);
  execFileSync(glassboxBin(), ['files', 'put', src, '--name', name, '--tenant', tenant, '--data-dir', dataDir], { encoding: 'utf8' });
  fs.rmSync(src);
  return { name, bytes, sha256: sha256(bytes) };
}

export const putFile = (dataDir, name, bytes) => putFileFor(dataDir, 'local', name, bytes);

/* The bytes of a glassbox:// resource, read with resources/read. */
export async function readResource(client, uri) {
  const r = await client.readResource({ uri });
  const c = r.contents[0];
  return c.blob !== undefined ? Buffer.from(c.blob, 'base64') : Buffer.from(c.text, 'utf8');
}

/* The audit records of kind, in order. */
export function recordsOf(dataDir, kind) {
  return auditRecords(dataDir).filter((r) => r.kind === kind);
}

/* `glassbox audit verify` on dataDir: its output; throws when it fails. */
export function auditVerify(dataDir) {
  return execFileSync(glassboxBin(), ['audit', 'verify', '--data-dir', dataDir], { encoding: 'utf8' });
}
