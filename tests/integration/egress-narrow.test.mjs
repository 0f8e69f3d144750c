/*
 * A session narrows its tenant's egress policy (browser_session "narrow"):
 * from then on the tools, CDP Fetch and the proxy refuse what the narrowing
 * leaves out, a narrowing can only take away, and the call is recorded.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import {
  assert, openGlassbox, startFixtureServer, ok, callTool, sc, dump, newDataDir, evaluate, auditText,
} from '../e2e/lib.mjs';

let fixture;
let gb;
let dir;

/* A glassbox whose tenant allows shop.test and other.test, with the given egress layers. */
async function start(layers) {
  const d = newDataDir('glassbox-narrow-');
  const policy = path.join(d, 'policy.json');
  fs.writeFileSync(policy, JSON.stringify({
    egress: { allow_private: ['127.0.0.1:*', '[::1]:*'], hosts: { 'shop.test': '127.0.0.1', 'other.test': '127.0.0.1' } },
    risk: { evaluate: 'allow' },
    ...(layers ? { egress_layers: layers } : {}),
  }));
  return { gb: await openGlassbox({ dataDir: d, env: { GLASSBOX_CONFIG: policy } }), dir: d };
}

before(async () => {
  fixture = await startFixtureServer();
  ({ gb, dir } = await start());
});

after(async () => {
  await gb?.close();
  await fixture?.close();
  gb?.removeDataDir();
});

const shop = (p) => `http://shop.test:${fixture.port}${p}`;
const other = (p) => `http://other.test:${fixture.port}${p}`;
const hitsOf = async (p) => {
  const r = await fetch(`${fixture.url}/__hits`);
  return (await r.json()).paths[p] || 0;
};

test('after a narrowing, every layer refuses the host it took away, and a narrowing cannot widen', async () => {
  await ok(gb.client, 'browser_navigate', { url: other('/form.html') });
  await ok(gb.client, 'browser_navigate', { url: shop('/form.html') });

  let r = await ok(gb.client, 'browser_session', { action: 'narrow', egress: { deny: ['other.test'] } });
  assert.deepEqual(sc(r).egress_narrowed, { deny: ['other.test'] }, dump(r));

  // layer 1: the tool refuses to navigate there
  r = await callTool(gb.client, 'browser_navigate', { url: other('/second.html') });
  assert.equal(r.isError, true, dump(r));
  assert.match(JSON.stringify(sc(r)), /other\.test/);

  // layers 2 and 3: a request from the page gets nowhere
  const probe = `/narrow-probe-${crypto.randomBytes(6).toString('hex')}`;
  const got = await evaluate(gb.client, `async () => { try { await fetch(${JSON.stringify(other(probe))}); return 'reached'; } catch (e) { return 'refused'; } }`);
  assert.equal(got, 'refused');
  assert.equal(await hitsOf(probe), 0, 'the denied host saw nothing');

  // an allowlist in a second narrowing cannot bring the host back
  await ok(gb.client, 'browser_session', { action: 'narrow', egress: { allow: [`shop.test:${fixture.port}`, `other.test:${fixture.port}`] } });
  r = await callTool(gb.client, 'browser_navigate', { url: other('/form.html') });
  assert.equal(r.isError, true, dump(r));
  await ok(gb.client, 'browser_navigate', { url: shop('/second.html') });

  // bad input is refused with the reason, and the narrowing is in the audit trail
  r = await callTool(gb.client, 'browser_session', { action: 'narrow', egress: { hosts: { 'x.test': '127.0.0.1' } } });
  assert.equal(r.isError, true, dump(r));
  assert.match(JSON.stringify(sc(r)), /resolver overrides belong in the tenant/);
  assert.match(auditText(dir, 'local'), /"narrow"/);
});

test('the proxy alone (tools and Fetch off) also refuses what a narrowing took away', async () => {
  const run = await start({ tool: false, fetch: false });
  try {
    await ok(run.gb.client, 'browser_navigate', { url: shop('/form.html') });
    const probe = (tag) => `/narrow-proxy-${tag}-${crypto.randomBytes(6).toString('hex')}`;
    const before = probe('before');
    await evaluate(run.gb.client, `async () => { try { await fetch(${JSON.stringify(other(before))}, { mode: 'no-cors' }); } catch (e) {} return 1; }`);
    assert.equal(await hitsOf(before), 1, 'before the narrowing the page reaches other.test: the drill can fail');
    await ok(run.gb.client, 'browser_session', { action: 'narrow', egress: { deny: ['other.test'] } });
    const after = probe('after');
    await evaluate(run.gb.client, `async () => { try { await fetch(${JSON.stringify(other(after))}, { mode: 'no-cors' }); } catch (e) {} return 1; }`);
    assert.equal(await hitsOf(after), 0, 'the proxy refused the narrowed host');
  } finally {
    await run.gb.close();
    run.gb.removeDataDir();
  }
});
