/*
 * Shared by tests/integration/gates*.test.mjs: the tenant policy with the
 * shipped risk rules on (fixtures/policy/gates.json: approvals live 10 s),
 * `glassbox approvals ...` as a person would run it, and the fixture's
 * request counts.
 *
 * Importing this module points GLASSBOX_CONFIG at that policy, so the
 * glassbox that useGlassbox() starts gates destructive actions.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assert, glassboxBin, REPO_ROOT, dump, sc, findRef, snapshot, auditRecords } from '../e2e/lib.mjs';

export const GATES_POLICY = path.join(REPO_ROOT, 'fixtures', 'policy', 'gates.json');
export const TTL_SECONDS = JSON.parse(fs.readFileSync(GATES_POLICY, 'utf8')).risk.approval_ttl_seconds;

process.env.GLASSBOX_CONFIG = GATES_POLICY;

/* Runs `glassbox approvals ARGS --data-dir DIR`; resolves {code, stdout, stderr}. */
export function approvals(dataDir, args) {
  return new Promise((resolve) => {
    execFile(glassboxBin(), ['approvals', ...args, '--data-dir', dataDir], { encoding: 'utf8', timeout: 20000 },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr });
      });
  });
}

/* approvals approve|deny ID, asserting it worked; returns stdout. */
export async function decide(dataDir, verb, id, extra = []) {
  const r = await approvals(dataDir, [verb, id, ...extra]);
  assert.equal(r.code, 0, `glassbox approvals ${verb} ${id} exited ${r.code}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

/* The name `glassbox approvals` records as the decider when --by is not given. */
export function defaultDecider() {
  if (process.getuid() === 0 && process.env.SUDO_USER) return `${process.env.SUDO_USER} (via sudo)`;
  return os.userInfo().username;
}

/* How many times the fixture saw "METHOD /path". */
export function seen(fixture, request) {
  return fixture.hits().requests[request] ?? 0;
}

/* The ref of a button, from a fresh snapshot. */
export async function buttonRef(client, name) {
  return findRef(await snapshot(client), 'button', name);
}

/* Asserts result is an approval_required result; returns its gate object. */
export function assertApprovalRequired(result, what = 'the call') {
  assert.equal(result.isError, true, `${what} must not run without approval: ${dump(result)}`);
  const s = sc(result);
  assert.equal(s.ok, false, dump(result));
  assert.equal(s.error?.code, 'approval_required', `${what}: ${dump(result)}`);
  const g = s.gate;
  assert.ok(g, `${what}: structuredContent.gate: ${dump(result)}`);
  assert.equal(g.status, 'approval_required', dump(result));
  assert.match(g.approval_id, /^apr-[0-9a-f]{8,}$/, dump(result));
  assert.match(g.fingerprint, /^[0-9a-f]{64}$/, dump(result));
  assert.ok(g.summary && g.rule, dump(result));
  assert.match(g.expires_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/, dump(result));
  assert.match(s.operation_id, /\S/, dump(result));
  return g;
}

/* Asserts result is an approval_refused result with this reason; returns its gate object. */
export function assertApprovalRefused(result, reason, what = 'the call') {
  assert.equal(result.isError, true, `${what} must be refused: ${dump(result)}`);
  const s = sc(result);
  assert.equal(s.ok, false, dump(result));
  assert.equal(s.error?.code, 'approval_refused', `${what}: ${dump(result)}`);
  assert.equal(s.gate?.status, 'approval_refused', dump(result));
  assert.equal(s.gate?.reason, reason, `${what}: refused because ${reason}: ${dump(result)}`);
  return s.gate;
}

export { auditRecords };
