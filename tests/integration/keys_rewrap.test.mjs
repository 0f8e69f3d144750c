/*
 * Rotating the master key of replicas (docs/deploy.md, "Rotating the
 * master key"), through the glassbox CLI on a real data dir and a
 * directory object store: with the new key current and the old one in
 * $GLASSBOX_MASTER_KEY_OTHER_FILE, what the old key wrapped still opens;
 * `glassbox keys rewrap --store` re-wraps the data dir's tenant keys and
 * the object store's with the new key, once; then the old key is not
 * needed. No key ever shows in an output.
 */
import { test, after } from 'node:test';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { assert, glassboxBin, newDataDir } from '../e2e/lib.mjs';

const work = newDataDir('glassbox-rewrap-');
const dataDir = path.join(work, 'data');
const bucket = path.join(work, 'bucket');
const keyA = path.join(work, 'a.key');
const keyB = path.join(work, 'b.key');
const hexA = crypto.randomBytes(32).toString('hex');
const hexB = crypto.randomBytes(32).toString('hex');
fs.writeFileSync(keyA, hexA + '\n', { mode: 0o600 });
fs.writeFileSync(keyB, hexB + '\n', { mode: 0o600 });
const config = path.join(work, 'serve.json');
fs.writeFileSync(config, JSON.stringify({ object_store: { dir: bucket } }));

after(() => fs.rmSync(work, { recursive: true, force: true }));

/* Runs glassbox ARGS with the master key file(s) given: {status, out}. */
function glassbox(args, { master, other, input } = {}) {
  const env = { ...process.env, GLASSBOX_DATA_DIR: dataDir, GLASSBOX_MASTER_KEY_FILE: master };
  delete env.GLASSBOX_MASTER_KEY_OTHER_FILE;
  if (other) env.GLASSBOX_MASTER_KEY_OTHER_FILE = other;
  const r = spawnSync(glassboxBin(), args, { env, input, encoding: 'utf8' });
  const out = r.stdout + r.stderr;
  assert.ok(!out.includes(hexA) && !out.includes(hexB), `no master key in the output: ${out}`);
  return { status: r.status, out };
}

const masterId = (file) => glassbox(['keys', 'init'], { master: file }).out.match(/master key ([0-9a-f]{16})/)[1];
const bucketKey = () => JSON.parse(fs.readFileSync(path.join(bucket, 'tenants', 'acme', 'keys', 'tenant.key'), 'utf8'));
const setSecret = (name, keys) => glassbox(['secret', 'set', name, '--hosts', 'shop.test', '--tenant', 'acme'], { ...keys, input: 'value-of-' + name });

test('the new key current, the old one the other: rewrap moves every tenant key to the new key, then the old one is not needed', () => {
  const idA = masterId(keyA);
  const idB = masterId(keyB);
  assert.notEqual(idA, idB);
  // a tenant key of the data dir, and the same published in the object store (as a replica publishes it)
  let r = setSecret('one', { master: keyA });
  assert.equal(r.status, 0, r.out);
  fs.mkdirSync(path.join(bucket, 'tenants', 'acme', 'keys'), { recursive: true });
  fs.copyFileSync(path.join(dataDir, 'keys', 'tenants', 'acme.key'), path.join(bucket, 'tenants', 'acme', 'keys', 'tenant.key'));
  assert.equal(bucketKey().master_id, idA);

  // the new key alone does not open what the old one wrapped, and says what to do
  r = setSecret('two', { master: keyB });
  assert.notEqual(r.status, 0, r.out);
  assert.match(r.out, new RegExp(`was wrapped by master key ${idA}, which this data dir does not have: restore that master key, or name it in \\$GLASSBOX_MASTER_KEY_OTHER_FILE`));
  // rotating in place is refused for a key kept elsewhere, pointing at rewrap
  r = glassbox(['keys', 'rotate'], { master: keyB });
  assert.notEqual(r.status, 0, r.out);
  assert.match(r.out, /GLASSBOX_MASTER_KEY_OTHER_FILE and glassbox keys rewrap/);

  // with the old key as the other, it opens
  r = setSecret('two', { master: keyB, other: keyA });
  assert.equal(r.status, 0, r.out);

  r = glassbox(['keys', 'rewrap', '--store', config], { master: keyB, other: keyA });
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, new RegExp(`tenant keys wrapped by master key ${idB}: 1 of the data dir, 1 re-wrapped in the object store dir ${bucket.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
  assert.equal(bucketKey().master_id, idB);
  assert.equal(JSON.parse(fs.readFileSync(path.join(dataDir, 'keys', 'tenants', 'acme.key'), 'utf8')).master_id, idB);
  // once done, nothing more to re-wrap in the store
  r = glassbox(['keys', 'rewrap', '--store', config], { master: keyB, other: keyA });
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /, 0 re-wrapped in the object store/);

  // the old key is no longer needed; the old key alone no longer opens
  r = setSecret('three', { master: keyB });
  assert.equal(r.status, 0, r.out);
  r = setSecret('four', { master: keyA });
  assert.notEqual(r.status, 0, r.out);
  assert.match(r.out, new RegExp(`was wrapped by master key ${idB}`));

  // --store is for rewrap only
  r = glassbox(['keys', 'init', '--store', config], { master: keyB });
  assert.equal(r.status, 2, r.out);
  assert.match(r.out, /--store is for rewrap only/);
});

test('on a replica\'s data dir the other key is keys/master.key.other (copied from the Secret), and keys rotate is refused there', () => {
  const idB = masterId(keyB);
  const dir = newDataDir('glassbox-rewrap-replica-');
  const env = { ...process.env, GLASSBOX_DATA_DIR: dir };
  delete env.GLASSBOX_MASTER_KEY_FILE;
  delete env.GLASSBOX_MASTER_KEY_OTHER_FILE;
  const run = (args, extra = {}, input) => {
    const r = spawnSync(glassboxBin(), args, { env: { ...env, ...extra }, input, encoding: 'utf8' });
    const out = r.stdout + r.stderr;
    assert.ok(!out.includes(hexA) && !out.includes(hexB), `no master key in the output: ${out}`);
    return { status: r.status, out };
  };
  try {
    fs.mkdirSync(path.join(dir, 'keys'), { mode: 0o700 });
    fs.copyFileSync(keyA, path.join(dir, 'keys', 'master.key'));
    let r = run(['secret', 'set', 'one', '--hosts', 'shop.test', '--tenant', 'acme'], {}, 'v1');
    assert.equal(r.status, 0, r.out);
    // step 2: the new key current, the old one the other
    fs.copyFileSync(keyB, path.join(dir, 'keys', 'master.key'));
    fs.copyFileSync(keyA, path.join(dir, 'keys', 'master.key.other'));
    r = run(['secret', 'set', 'two', '--hosts', 'shop.test', '--tenant', 'acme'], {}, 'v2');
    assert.equal(r.status, 0, r.out);
    r = run(['keys', 'rotate'], { GLASSBOX_REPLICA_ID: 'glassbox-0' });
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /this is replica glassbox-0, whose master key every replica shares/);
    r = run(['keys', 'rotate']);
    assert.equal(r.status, 1, r.out);
    assert.match(r.out, /a rotation of the replicas' master key is under way/);
    r = run(['keys', 'rewrap']);
    assert.equal(r.status, 0, r.out);
    assert.match(r.out, new RegExp(`tenant keys wrapped by master key ${idB}: 1 of the data dir\n`));
    // step 4: the other key gone, everything opens with the new one
    fs.rmSync(path.join(dir, 'keys', 'master.key.other'));
    r = run(['secret', 'set', 'three', '--hosts', 'shop.test', '--tenant', 'acme'], {}, 'v3');
    assert.equal(r.status, 0, r.out);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
