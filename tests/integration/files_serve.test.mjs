/*
 * The files tools under `glassbox serve`, over Streamable HTTP with the
 * SDK client: each tenant has its own upload area (a file put for one is
 * neither listed to nor uploadable by the other), and a download is kept
 * in the tenant's own store, served to that tenant's resources/read only.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import { assert, startFixtureServer, callTool, sc, dump, textOf, newDataDir, pollUntil } from '../e2e/lib.mjs';
import { startServe } from './serve_helpers.mjs';
import { putFileFor } from './files_helpers.mjs';

let fixture, svc, a, b, dataDir;

before(async () => {
  fixture = await startFixtureServer();
  dataDir = newDataDir('glassbox-files-serve-');
  putFileFor(dataDir, 'acme', 'invoice.pdf', Buffer.from('%PDF-1.4\nacme only\n'));
  svc = await startServe({ tenants: { acme: {}, other: {} }, dataDir });
  a = await svc.connect('acme');
  b = await svc.connect('other');
});

after(async () => {
  await a?.client.close();
  await b?.client.close();
  if (svc) await svc.stop('SIGTERM');
  if (fixture) await fixture.close();
  if (dataDir && process.env.GLASSBOX_KEEP_DATA !== '1') fs.rmSync(dataDir, { recursive: true, force: true });
});

test("a tenant's upload area is its own", async () => {
  const mine = await a.client.listResources();
  assert.deepEqual(mine.resources.map((r) => r.uri), ['glassbox://upload/invoice.pdf']);
  const theirs = await b.client.listResources();
  assert.deepEqual(theirs.resources, []);
  await assert.rejects(b.client.readResource({ uri: 'glassbox://upload/invoice.pdf' }), /no file 'invoice.pdf' in the upload area of tenant other/);

  await callTool(b.client, 'browser_navigate', { url: fixture.url + '/files/upload.html' });
  await callTool(b.client, 'browser_click', { target: '#doc' });
  const r = await callTool(b.client, 'browser_file_upload', { paths: ['invoice.pdf'] });
  assert.equal(sc(r).error?.code, 'not_found', dump(r));
  assert.match(textOf(r), /upload area of tenant other/);
});

test("a download is kept in the tenant's store and read back by that tenant only", async () => {
  await callTool(a.client, 'browser_navigate', { url: fixture.url + '/files/download.html?size=4321' });
  const r = await callTool(a.client, 'browser_click', { target: '#report' });
  let d = sc(r).downloads || [];
  if (!d.length) d = sc(await callTool(a.client, 'browser_snapshot', {})).downloads || [];
  assert.equal(d[0]?.state, 'completed', dump(r));
  const got = await a.client.readResource({ uri: d[0].uri });
  assert.equal(Buffer.from(got.contents[0].blob, 'base64').length, 4321);
  await assert.rejects(b.client.readResource({ uri: d[0].uri }), /not found/);
});

test('a pooled browser downloads into its session area too', async () => {
  const pooled = await startServe({ tenants: { t: {} }, warmPool: 1, admin: true });
  try {
    const ready = async () => JSON.parse((await pooled.admin('GET', '/healthz', { token: null })).text).warm_pool;
    assert.ok(await pollUntil(async () => (await ready()).ready === 1, { deadlineMs: 60000 }), 'the pool filled');
    const c = await pooled.connect('t');
    try {
      const nav = await callTool(c.client, 'browser_navigate', { url: fixture.url + '/files/download.html?size=999' });
      assert.equal(sc(nav).browser, 'pooled', dump(nav));
      const r = await callTool(c.client, 'browser_click', { target: '#report' });
      let d = sc(r).downloads || [];
      if (!d.length) d = sc(await callTool(c.client, 'browser_snapshot', {})).downloads || [];
      assert.equal(d[0]?.state, 'completed', dump(r));
      assert.equal(d[0].size, 999);
    } finally {
      await c.client.close();
    }
  } finally {
    await pooled.stop('SIGTERM');
  }
});
