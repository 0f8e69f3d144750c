/*
 * s3_server.mjs - a real S3-API server on loopback for the tests:
 * s3rver (objects on disk, the S3 REST and XML responses) behind a
 * front that does the two things s3rver 3.7 leaves out and a real store
 * does: it checks each request's Signature Version 4 (recomputed with the
 * AWS SDK's own signer, @smithy/signature-v4, over the headers the
 * request says it signed, and the body against x-amz-content-sha256),
 * and it honours If-None-Match: * on PUT (412 when the object exists).
 * A request that fails the check gets S3's 403 SignatureDoesNotMatch or
 * InvalidAccessKeyId and never reaches s3rver.
 *
 *   const s3 = await startS3({ bucket: 'glassbox' });
 *   s3.endpoint, s3.accessKeyId, s3.secretAccessKey, s3.requests (log)
 *   await s3.stop()                          // a second stop does nothing
 */
import S3rver from 's3rver';
import { SignatureV4 } from '@smithy/signature-v4';
import { Hash } from '@smithy/hash-node';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';

const sha256 = Hash.bind(null, 'sha256');

function s3Error(res, status, code, message) {
  res.writeHead(status, { 'content-type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

/* The reason the request's signature is wrong, or null when it is right. */
async function signatureProblem(req, body, creds) {
  const auth = req.headers.authorization || '';
  const m = auth.match(/^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/);
  if (!m) return ['AccessDenied', 'no Signature Version 4 Authorization header'];
  const [, akid, day, region, signed, signature] = m;
  if (akid !== creds.accessKeyId) return ['InvalidAccessKeyId', 'The AWS Access Key Id you provided does not exist in our records.'];
  const amzDate = req.headers['x-amz-date'] || '';
  const dm = amzDate.match(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/);
  if (!dm || amzDate.slice(0, 8) !== day) return ['AccessDenied', 'x-amz-date is missing or does not match the scope'];
  const when = new Date(Date.UTC(+dm[1], +dm[2] - 1, +dm[3], +dm[4], +dm[5], +dm[6]));
  if (Math.abs(Date.now() - when.getTime()) > 15 * 60 * 1000) return ['RequestTimeTooSkewed', 'the request time is too far from the server time'];
  const declared = req.headers['x-amz-content-sha256'];
  if (!declared) return ['AccessDenied', 'x-amz-content-sha256 is missing'];
  if (declared !== 'UNSIGNED-PAYLOAD' && declared !== crypto.createHash('sha256').update(body).digest('hex'))
    return ['XAmzContentSHA256Mismatch', 'the body does not match x-amz-content-sha256'];
  const names = signed.split(';');
  if (!names.includes('host')) return ['AccessDenied', 'host is not signed'];
  const headers = {};
  for (const n of names) {
    if (req.headers[n] === undefined) return ['AccessDenied', `signed header ${n} is missing`];
    headers[n] = String(req.headers[n]);
  }
  const url = new URL(req.url, 'http://x');
  const query = {};
  for (const [k, v] of url.searchParams) query[k] = v;
  const signer = new SignatureV4({ credentials: creds, region, service: 's3', sha256, uriEscapePath: false, applyChecksum: false });
  const signedReq = await signer.sign(
    { method: req.method, protocol: 'http:', hostname: headers.host.split(':')[0], path: url.pathname, query, headers, body },
    { signingDate: when, signableHeaders: new Set(names) }
  );
  const want = (signedReq.headers.authorization || '').match(/Signature=([0-9a-f]{64})/)[1];
  const gotSigned = (signedReq.headers.authorization || '').match(/SignedHeaders=([^,]+)/)[1];
  if (gotSigned !== signed || want !== signature)
    return ['SignatureDoesNotMatch', 'The request signature we calculated does not match the signature you provided. Check your key and signing method.'];
  return null;
}

/* Whether the object of a path-style URL /bucket/key exists in s3rver. */
function exists(port, reqPath) {
  return new Promise((resolve, reject) => {
    const r = http.request({ host: '127.0.0.1', port, method: 'HEAD', path: reqPath, headers: { authorization: 'AWS4-HMAC-SHA256 Credential=S3RVER/20000101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=' + '0'.repeat(64), 'x-amz-date': '20000101T000000Z', 'x-amz-content-sha256': 'UNSIGNED-PAYLOAD' } }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    r.on('error', reject);
    r.end();
  });
}

export async function startS3({ bucket = 'glassbox', accessKeyId = 'AKIDGLASSBOXTEST', secretAccessKey = crypto.randomBytes(20).toString('hex') } = {}) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'glassbox-s3-'));
  const back = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, vhostBuckets: false, configureBuckets: [{ name: bucket }] });
  const backAddr = await back.run();
  const backPort = backAddr.port;
  const creds = { accessKeyId, secretAccessKey };
  const requests = [];
  const front = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      try {
        const problem = await signatureProblem(req, body, creds);
        requests.push({ method: req.method, url: req.url, ok: !problem, code: problem ? problem[0] : null });
        if (problem) return s3Error(res, 403, problem[0], problem[1]);
        if (req.method === 'PUT' && req.headers['if-none-match'] === '*' && (await exists(backPort, req.url.split('?')[0])))
          return s3Error(res, 412, 'PreconditionFailed', 'At least one of the pre-conditions you specified did not hold');
        // s3rver knows its own account only; the signature was checked above
        const headers = { ...req.headers, authorization: 'AWS4-HMAC-SHA256 Credential=S3RVER/20000101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=' + '0'.repeat(64) };
        delete headers['if-none-match'];
        const up = http.request({ host: '127.0.0.1', port: backPort, method: req.method, path: req.url, headers }, (ur) => {
          res.writeHead(ur.statusCode, ur.headers);
          ur.pipe(res);
        });
        up.on('error', (e) => s3Error(res, 502, 'InternalError', String(e.message)));
        up.end(body);
      } catch (e) {
        s3Error(res, 500, 'InternalError', String(e && e.message));
      }
    });
  });
  await new Promise((resolve) => front.listen(0, '127.0.0.1', resolve));
  const port = front.address().port;
  let stopped = false;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    port,
    bucket,
    accessKeyId,
    secretAccessKey,
    dir,
    requests,
    /* The object's file in s3rver's directory (to alter or delete it as an attacker would). */
    objectPath: (key) => path.join(dir, bucket, key + '._S3rver_object'),
    /* Stops both servers and removes the objects; again, nothing. */
    async stop() {
      if (stopped) return;
      stopped = true;
      await new Promise((resolve) => front.close(resolve));
      await back.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
