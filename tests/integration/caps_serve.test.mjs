/*
 * Capability groups per tenant of `glassbox serve`: each tenant's policy
 * says which groups its agents get (tools/list over Streamable HTTP shows
 * only those, a call to a tool of a group that is off is refused), and one
 * tenant's groups are not another's.
 */
import { test, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, REPO_ROOT, callTool, sc, dump, assertToolError } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';

const LOOPBACK = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
let svc;

after(async () => {
  if (svc) await svc.stop('SIGTERM');
});

test('a tenant with "caps": ["vision"] lists the vision tools; another tenant does not, and is refused', async () => {
  svc = await startServe({ tenants: { seeing: { policy: { ...LOOPBACK, caps: ['vision'] } }, plain: {} } });
  const seeing = await svc.connect('seeing');
  const plain = await svc.connect('plain');
  const names = async (c) => (await c.client.listTools()).tools.map((t) => t.name);
  const a = await names(seeing);
  const b = await names(plain);
  assert.ok(a.includes('browser_mouse_click_xy') && a.includes('browser_mouse_wheel'), a.join(', '));
  assert.ok(!a.includes('browser_verify_value'), 'testing is not on for it');
  assert.ok(!b.includes('browser_mouse_click_xy'), b.join(', '));
  assert.ok(b.includes('browser_fill_form'));
  const r = await callTool(plain.client, 'browser_mouse_click_xy', { x: 5, y: 5 });
  const text = assertToolError(r, 'a vision tool for a tenant without the group');
  assert.equal(sc(r).error?.code, 'capability_off', dump(r));
  assert.match(text, /"caps": \["vision"\]/);
});
