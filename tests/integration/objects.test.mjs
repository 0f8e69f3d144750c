/*
 * objects.test.mjs - the S3 side of the blob interface, through
 * `glassbox objects`, against a real S3-API server on loopback
 * (tests/e2e/s3_server.mjs: s3rver behind a Signature V4 check): put,
 * get, a put that never replaces (If-None-Match), listings, wrong
 * credentials, a store that is down; and that the server used here does
 * refuse a bad signature, so these tests could fail.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { glassboxBin, newDataDir, REPO_ROOT } from '../e2e/lib.mjs';
import { startS3 } from '../e2e/s3_server.mjs';

let s3;
let dir;

function config(name, s3cfg) {
  const p = path.join(dir, name);
  fs.writeFileSync(p, JSON.stringify({ object_store: { s3: s3cfg } }), { mode: 0o600 });
  return p;
}

function secretFile(name, text) {
  const p = path.join(dir, name);
  fs.writeFileSync(p, text + '\n', { mode: 0o600 });
  return p;
}

/* Runs glassbox objects (asynchronously: the S3 server runs in this process). */
function objects(args, env = {}) {
  return new Promise((resolve) => {
    const p = spawn(glassboxBin(), ['objects', ...args], { cwd: REPO_ROOT, env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += d));
    p.stderr.on('data', (d) => (err += d));
    p.on('exit', (code) => resolve({ code, out, err }));
  });
}

let good;

before(async () => {
  s3 = await startS3({ bucket: 'glassbox' });
  dir = newDataDir('glassbox-objects-');
  good = config('good.json', {
    endpoint: s3.endpoint,
    bucket: 'glassbox',
    path_style: true,
    prefix: 'it/',
    access_key_id_file: secretFile('akid', s3.accessKeyId),
    secret_access_key_file: secretFile('secret', s3.secretAccessKey),
  });
});

after(async () => {
  await s3.stop();
});

test('the test server refuses a request signed with the wrong secret, and one not signed at all', async () => {
  const bad = await fetch(`${s3.endpoint}/glassbox/it/x`, { headers: { authorization: `AWS4-HMAC-SHA256 Credential=${s3.accessKeyId}/20260101/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-content-sha256;x-amz-date, Signature=${'a'.repeat(64)}`, 'x-amz-date': new Date().toISOString().replace(/[-:]/g, '').replace(/\.\d+/, ''), 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } });
  assert.equal(bad.status, 403);
  assert.match(await bad.text(), /SignatureDoesNotMatch|AccessDenied/);
  const none = await fetch(`${s3.endpoint}/glassbox/it/x`);
  assert.equal(none.status, 403);
});

test('check stores a probe, reads it back and lists it', async () => {
  const r = await objects(['check', '--config', good]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^ok: s3:\/\/glassbox\/it\/ at http:\/\/127\.0\.0\.1:\d+ stores, reads back and lists/);
});

test('put, get and ls; a second put of the same key keeps the first bytes', async () => {
  const a = path.join(dir, 'a.bin');
  const b = path.join(dir, 'b.bin');
  fs.writeFileSync(a, Buffer.from([0, 1, 2, 255, 10, 13]));
  fs.writeFileSync(b, 'other bytes');
  let r = await objects(['put', 'tenants/t1/artifacts/ab/abc', a, '--config', good]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^stored: /);
  r = await objects(['put', 'tenants/t1/artifacts/ab/abc', b, '--config', good]);
  assert.equal(r.code, 0, r.err);
  assert.match(r.out, /^exists: .* kept as it is/);
  const out = path.join(dir, 'got.bin');
  r = await objects(['get', 'tenants/t1/artifacts/ab/abc', '-o', out, '--config', good]);
  assert.equal(r.code, 0, r.err);
  assert.deepEqual(fs.readFileSync(out), fs.readFileSync(a));
  // the object under the prefix, as s3rver keeps it
  assert.deepEqual(fs.readFileSync(s3.objectPath('it/tenants/t1/artifacts/ab/abc')), fs.readFileSync(a));
  r = await objects(['ls', 'tenants/t1/', '--config', good]);
  assert.equal(r.code, 0, r.err);
  assert.equal(r.out, '6\ttenants/t1/artifacts/ab/abc\n');
  // the PUT carried If-None-Match: the server saw a HEAD and no second PUT
  const puts = s3.requests.filter((q) => q.method === 'PUT' && q.url.endsWith('/it/tenants/t1/artifacts/ab/abc'));
  assert.equal(puts.length, 1);
});

test('a missing object, a bad key and a refused secret each get a clear error that names no secret', async () => {
  let r = await objects(['get', 'tenants/t1/none', '--config', good]);
  assert.equal(r.code, 1);
  assert.match(r.err, /no object tenants\/t1\/none in s3:\/\/glassbox\/it\//);
  r = await objects(['get', '../etc/passwd', '--config', good]);
  assert.equal(r.code, 1);
  assert.match(r.err, /is not an object key/);
  const wrong = 'wrong-secret-' + 'z'.repeat(20);
  const bad = config('bad.json', { endpoint: s3.endpoint, bucket: 'glassbox', path_style: true, access_key_id_file: secretFile('akid2', s3.accessKeyId), secret_access_key_file: secretFile('wrong', wrong) });
  r = await objects(['check', '--config', bad]);
  assert.equal(r.code, 1);
  assert.match(r.err, /refused the request \(HTTP 403\): check the access key id and secret/);
  assert.ok(!r.err.includes(wrong) && !r.out.includes(wrong));
  assert.ok(s3.requests.some((q) => q.code === 'SignatureDoesNotMatch'));
  // credentials from the environment work too
  const env = config('env.json', { endpoint: s3.endpoint, bucket: 'glassbox', path_style: true });
  r = await objects(['check', '--config', env], { AWS_ACCESS_KEY_ID: s3.accessKeyId, AWS_SECRET_ACCESS_KEY: s3.secretAccessKey });
  assert.equal(r.code, 0, r.err);
  r = await objects(['check', '--config', env], { AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: '' });
  assert.equal(r.code, 1);
  assert.match(r.err, /no AWS_ACCESS_KEY_ID: name a file holding it in access_key_id_file, or set AWS_ACCESS_KEY_ID/);
});

test('a store that is down: the error names the endpoint and says what to check', async () => {
  const down = config('down.json', { endpoint: 'http://127.0.0.1:9', bucket: 'glassbox', path_style: true, timeout_ms: 5000, access_key_id_file: path.join(dir, 'akid'), secret_access_key_file: path.join(dir, 'secret') });
  const r = await objects(['check', '--config', down]);
  assert.equal(r.code, 1);
  assert.match(r.err, /cannot reach the object store s3:\/\/glassbox\/ at http:\/\/127\.0\.0\.1:9: .*check that it runs/);
});
