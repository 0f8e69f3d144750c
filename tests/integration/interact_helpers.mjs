/*
 * Shared by the tests of the interaction tools (fill_form, drag, resize,
 * emulate_media, find, the vision and testing groups): a glassbox started
 * on a policy written for the test (a fixture policy plus capability
 * groups and risk rules), and the fixture's request counts.
 */
import { after } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { REPO_ROOT, useGlassbox } from '../e2e/lib.mjs';

/* A policy file: fixtures/policy/BASE.json with `extra` merged on top
 * (extra.risk merges into risk). Returns its path (removed in `after`). */
export function writePolicy(base, extra = {}) {
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', `${base}.json`), 'utf8'));
  const { risk, ...rest } = extra;
  Object.assign(policy, rest);
  if (risk) policy.risk = { ...policy.risk, ...risk };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-policy-'));
  const file = path.join(dir, 'policy.json');
  fs.writeFileSync(file, JSON.stringify(policy, null, 2));
  after(() => fs.rmSync(dir, { recursive: true, force: true }));
  return file;
}

/*
 * Registers before/after hooks: a fixture server and a glassbox on the
 * policy base + extra (see writePolicy). Returns {fixture, gb, client,
 * url(path)}, set once `before` has run.
 */
export function useGlassboxWith(base, extra = {}) {
  const config = writePolicy(base, extra);
  return useGlassbox({ options: () => ({ config }) });
}

/* How many times the fixture saw "METHOD /path". */
export function seen(fixture, request) {
  return fixture.hits().requests[request] ?? 0;
}

/* The centre of the element of selector, in viewport coordinates. */
export async function centreOf(evaluate, client, selector) {
  return evaluate(client, `() => { const r = document.querySelector(${JSON.stringify(selector)}).getBoundingClientRect();
    return { x: Math.round(r.left + r.width / 2), y: Math.round(r.top + r.height / 2) }; }`);
}
