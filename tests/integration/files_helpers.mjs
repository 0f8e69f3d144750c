/*
 * files_helpers.mjs - what the files tests share (files_*.test.mjs): a
 * glassbox session on a data dir whose upload area holds the test's
 * files, files put in a tenant's upload area with the real `glassbox
 * files put`, the bytes of a resource read back over MCP, the audit
 * records of a kind.
 */
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { glassboxBin, auditRecords, useGlassbox, newDataDir, REPO_ROOT } from '../e2e/lib.mjs';

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

/*
 * Registers before/after hooks for a files test: the fixture server, a
 * data dir of its own (named after prefix) whose upload area holds files
 * ({key: {name, bytes}}, each put with putFile: s.files[key] is its
 * {name, bytes, sha256}), and a glassbox session on it. With policy, the
 * session runs on the loopback test policy (fixtures/policy/loopback.json)
 * with policy's members over it, written to the data dir's policy.json;
 * without, on openGlassbox's default. Returns s: {fixture, gb, client,
 * dataDir, files, url(path)}, set once `before` has run. After: the
 * session closed, its data dir removed, the fixture server closed.
 */
export function useFilesSession({ prefix, policy, files = {} }) {
  const s = useGlassbox({
    options: () => {
      s.dataDir = newDataDir(prefix);
      for (const [key, f] of Object.entries(files)) s.files[key] = putFile(s.dataDir, f.name, f.bytes);
      if (!policy) return { dataDir: s.dataDir };
      const base = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
      const config = path.join(s.dataDir, 'policy.json');
      fs.writeFileSync(config, JSON.stringify({ ...base, ...policy }));
      return { dataDir: s.dataDir, config };
    },
  });
  s.dataDir = null;
  s.files = {};
  return s;
}

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
