/*
 * objects_audit.test.mjs - the audit trail across replicas in object
 * storage: two `glassbox serve` replicas (own data dirs, one audit key)
 * ship their chains, artifacts and heads to a real S3-API server on
 * loopback (tests/e2e/s3_server.mjs, signatures checked);
 * `glassbox audit verify --store` verifies the merged trail from the
 * store alone (the replicas' data dirs are removed first), and names a
 * deleted segment, an altered segment, a deleted artifact and a removed
 * tail.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, ok, newDataDir } from '../e2e/lib.mjs';
import { replicaEnv, shareSecret } from './replica_helpers.mjs';

const env = replicaEnv();
let fixture;
let s3;
let work;
let storeCfg;
let pubkey;

const run = (args) => env.run(args);
const verify = (...more) => run(['audit', 'verify', '--store', storeCfg, '--pubkey', pubkey, ...more]);

/* Keys in the bucket (through glassbox objects, signed like the service's requests). */
async function keys(prefix = 'tenants/') {
  const r = await run(['objects', 'ls', prefix, '--config', storeCfg]);
  assert.equal(r.code, 0, r.err);
  return r.out.split('\n').filter(Boolean).map((l) => l.split('\t')[1]);
}

/* Removes an object from the bucket as someone with access to the store
 * would; returns a function that puts it back as it was. */
function deleteObject(key) {
  const p = s3.objectPath(key);
  assert.ok(fs.existsSync(p), `object ${key} is in the store`);
  const dir = path.dirname(p);
  const saved = [];
  for (const f of fs.readdirSync(dir)) {
    if (!f.startsWith(path.basename(key) + '._S3rver_')) continue;
    saved.push([path.join(dir, f), fs.readFileSync(path.join(dir, f))]);
    fs.rmSync(path.join(dir, f));
  }
  return () => { for (const [f, bytes] of saved) fs.writeFileSync(f, bytes); };
}

before(async () => {
  await env.start({ bucket: 'trail', prefix: 'gb/', workPrefix: 'glassbox-merged-' });
  ({ fixture, s3, work, storeConfig: storeCfg } = env);
});

after(() => env.stop());

test('two replicas ship their chains; the merged trail verifies from the store alone and names what was removed or altered', async () => {
  // replica r1 creates the audit key; r2 gets a copy (as both would mount one Secret)
  const r1 = await env.startReplica('r1', { tenants: { acme: {}, beta: {} }, replica: { audit_ship_interval_ms: 200 } });
  const r2dir = shareSecret(r1.dataDir, newDataDir('glassbox-merged-r2-'));
  const r2 = await env.startReplica('r2', { dataDir: r2dir, tenants: { acme: {}, beta: {} }, tokens: r1.tokens, replica: { audit_ship_interval_ms: 200 } });
  pubkey = path.join(work, 'audit.pub');
  fs.copyFileSync(path.join(r1.dataDir, 'keys', 'audit.pub'), pubkey);

  for (const [svc, tenant] of [[r1, 'acme'], [r2, 'acme'], [r2, 'beta']]) {
    const { client } = await svc.connect(tenant);
    await ok(client, 'browser_navigate', { url: fixture.url + '/form.html' });
    await ok(client, 'browser_take_screenshot', {});
    await client.close();
  }
  for (const svc of [r1, r2]) {
    const r = await svc.stop('SIGTERM');
    assert.deepEqual(r, { code: 0, signal: null }, svc.stderr().slice(-3000));
  }
  // nothing on the replicas' disks is needed any more
  r1.removeDataDir();
  r2.removeDataDir();

  const all = await keys();
  for (const chain of ['acme/replicas/r1', 'acme/replicas/r2', 'beta/replicas/r2']) {
    assert.ok(all.includes(`tenants/${chain}/audit/head.json`), `head of ${chain} in ${all.join('\n')}`);
    assert.ok(all.some((k) => k.startsWith(`tenants/${chain}/audit/0000`)), `segments of ${chain}`);
  }
  assert.ok(!all.some((k) => k.startsWith('tenants/beta/replicas/r1/')), 'r1 served no beta session');
  assert.ok(all.some((k) => /^tenants\/acme\/artifacts\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(k)), 'the screenshots are in the store');
  // every request the replicas made was signed correctly
  assert.deepEqual(s3.requests.filter((q) => !q.ok), []);

  let r = await verify();
  assert.equal(r.code, 0, r.out + r.err);
  assert.match(r.out, /^acme \(replica r1\): chain verified: \d+ records in \d+ segments, [1-9]\d* artifacts$/m);
  assert.match(r.out, /^acme \(replica r2\): chain verified: /m);
  assert.match(r.out, /^beta \(replica r2\): chain verified: /m);
  r = await verify('--tenant', 'beta', '--json');
  assert.equal(r.code, 0, r.err);
  const j = JSON.parse(r.out);
  assert.equal(j.length, 1);
  assert.equal(j[0].replica, 'r2');
  assert.ok(j[0].records >= 4, JSON.stringify(j));

  // an altered segment is named: a record's body edited in the store
  const acmeR1 = (await keys('tenants/acme/replicas/r1/audit/')).filter((k) => k.endsWith('.jsonl')).sort();
  const acmeR2 = (await keys('tenants/acme/replicas/r2/audit/')).filter((k) => k.endsWith('.jsonl')).sort();
  const edited = acmeR2[0];
  const p = s3.objectPath('gb/' + edited);
  const orig = fs.readFileSync(p);
  fs.writeFileSync(p, orig.toString('utf8').replace('"kind":"session_opened"', '"kind":"session_openex"'));
  r = await verify('--tenant', 'acme');
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /^acme \(replica r1\): chain verified/m);
  assert.match(r.out, new RegExp(`^acme \\(replica r2\\): FAILED: segment ${edited.replace(/[.]/g, '\\.')}: .*edited`, 'm'));
  fs.writeFileSync(p, orig);

  // a deleted segment in the middle is named
  assert.ok(acmeR1.length >= 2, `r1 shipped acme in several segments: ${acmeR1}`);
  const gone = acmeR1[0];
  const restoreGone = deleteObject('gb/' + gone);
  r = await verify('--tenant', 'acme');
  assert.equal(r.code, 1, r.out);
  const range = gone.match(/(\d{20})-(\d{20})\.jsonl$/);
  assert.match(r.out, new RegExp(`acme \\(replica r1\\): FAILED: records ${Number(range[1])} to ${Number(range[2])} are in no segment: the segment before .* is missing`));
  restoreGone();
  r = await verify('--tenant', 'acme');
  assert.equal(r.code, 0, r.out);

  // the last segment deleted: the shipped head says more was written
  const r2beta = (await keys('tenants/beta/replicas/r2/audit/')).filter((k) => k.endsWith('.jsonl')).sort();
  deleteObject('gb/' + r2beta[r2beta.length - 1]);
  r = await verify('--tenant', 'beta');
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /beta \(replica r2\): FAILED: .*(missing|removed)/);

  // a screenshot deleted from the store (acme's chains are whole again)
  const art = all.find((k) => /^tenants\/acme\/artifacts\/[0-9a-f]{2}\/[0-9a-f]{64}$/.test(k));
  deleteObject('gb/' + art);
  r = await verify('--tenant', 'acme');
  assert.equal(r.code, 1, r.out);
  assert.match(r.out, /artifact_missing|which is missing/);
});
