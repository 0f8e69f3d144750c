/*
 * The loop a browser agent runs, end to end over MCP stdio: discover the
 * tools, open a form, read the page, fill it, save, check the effect,
 * follow a link, take a screenshot, read the evidence back.
 */
import { test } from 'node:test';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv';
import {
  assert,
  openGlassbox,
  useGlassbox,
  callTool,
  ok,
  sc,
  textOf,
  dump,
  snapshot,
  findRef,
  evaluate,
  imagesOf,
  resourceLinksOf,
  isPng,
  sha256,
  TOOL_NAMES,
} from './lib.mjs';

const h = useGlassbox();
// Carried from step to step, as an agent would.
const loop = {};

test('initialize: the server names itself and offers tools and resources', () => {
  const info = h.client.getServerVersion();
  assert.ok(info && typeof info.name === 'string' && info.name.length > 0, `serverInfo: ${JSON.stringify(info)}`);
  const caps = h.client.getServerCapabilities();
  assert.ok(caps?.tools, `capabilities.tools missing: ${JSON.stringify(caps)}`);
  assert.ok(caps?.resources, `capabilities.resources missing (evidence is read with resources/read): ${JSON.stringify(caps)}`);
});

test('tools/list: every tool has an input schema, an output schema and annotations', async () => {
  const { tools } = await h.client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of TOOL_NAMES) assert.ok(names.includes(want), `tool ${want} is missing from ${names.join(', ')}`);
  for (const t of tools) {
    assert.equal(t.inputSchema?.type, 'object', `${t.name}: inputSchema.type must be "object"`);
    assert.equal(typeof t.description, 'string', `${t.name}: needs a description`);
    assert.ok(t.description.length > 0, `${t.name}: empty description`);
    assert.equal(t.outputSchema?.type, 'object', `${t.name}: outputSchema.type must be "object"`);
    assert.ok(t.outputSchema.properties?.ok, `${t.name}: outputSchema must describe "ok"`);
    assert.ok(t.outputSchema.properties?.operation_id, `${t.name}: outputSchema must describe "operation_id"`);
    assert.ok(t.annotations && typeof t.annotations === 'object', `${t.name}: annotations missing`);
    const hints = ['readOnlyHint', 'destructiveHint', 'idempotentHint', 'openWorldHint'];
    assert.ok(hints.some((k) => typeof t.annotations[k] === 'boolean'), `${t.name}: annotations carry no hint: ${JSON.stringify(t.annotations)}`);
  }
  const byName = Object.fromEntries(tools.map((t) => [t.name, t]));
  assert.equal(byName.browser_snapshot.annotations.readOnlyHint, true, 'browser_snapshot is read-only');
  assert.notEqual(byName.browser_click.annotations.readOnlyHint, true, 'browser_click changes the page');
  assert.deepEqual(byName.browser_navigate.inputSchema.required, ['url']);
  assert.ok(byName.browser_click.inputSchema.properties.target, 'browser_click takes a target');
  assert.ok(byName.browser_click.inputSchema.properties.expect, 'state-changing tools take expect');
  assert.ok(byName.browser_click.inputSchema.properties.operation_id, 'state-changing tools take operation_id');
});

test('tools/list: the output schema every tool shares has one $id, so the SDK client compiles it once', async () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  const compile = ajv.compile.bind(ajv);
  let compiled = 0;
  ajv.compile = (schema) => {
    compiled++;
    return compile(schema);
  };
  const validator = new AjvJsonSchemaValidator(ajv);
  const gb = await openGlassbox({ clientOptions: { jsonSchemaValidator: validator } });
  try {
    const { tools } = await gb.client.listTools();
    const ids = new Set(tools.map((t) => t.outputSchema?.$id));
    assert.equal(ids.size, 1, `one schema id for all tools: ${[...ids].join(', ')}`);
    assert.match([...ids][0], /^urn:glassbox:tool-result:[0-9a-f]{16}$/);
    await gb.client.listTools();
    assert.equal(compiled, 1, `the ${tools.length} tools' output schema was compiled ${compiled} times`);
    // the one validator is the schema's: a result without "ok" is refused
    const check = validator.getValidator(tools[0].outputSchema);
    assert.equal(check({ operation_id: 'op-1', tool: 'browser_tabs' }).valid, false);
    assert.equal(check({ operation_id: 'op-1', tool: 'browser_tabs', ok: true }).valid, true);
  } finally {
    await gb.close();
    gb.removeDataDir();
  }
});

test('navigate to the form page', async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const s = sc(r);
  assert.equal(s.tool, 'browser_navigate');
  assert.equal(typeof s.operation_id, 'string');
  assert.equal(s.url, h.url('/form.html'));
  assert.equal(s.title, 'Account settings');
  assert.equal(s.navigated, true);
  assert.equal(s.status, 200);
  assert.equal(h.fixture.hits().requests['GET /form.html'], 1, 'the browser loaded the form once');
});

test('snapshot: the form is there with refs', async () => {
  const snap = await snapshot(h.client);
  assert.match(snap.text, /Account settings/);
  loop.name = findRef(snap, 'textbox', 'Name');
  loop.save = findRef(snap, 'button', 'Save');
  loop.link = findRef(snap, 'link', 'Go to the second page');
  assert.match(loop.name, /^e\d+$/);
  assert.notEqual(loop.name, loop.save);
});

test('type into the Name textbox', async () => {
  const r = await ok(h.client, 'browser_type', { target: loop.name, element: 'Name textbox', text: 'Ada Lovelace' });
  assert.equal(sc(r).value, 'Ada Lovelace', 'the field value is re-read after typing');
  assert.equal(await evaluate(h.client, "() => document.getElementById('name').value"), 'Ada Lovelace');
});

test('click Save: the POST is seen, the status line updates, exactly one request reached the site', async () => {
  const r = await ok(h.client, 'browser_click', { target: loop.save, element: 'Save button' });
  const s = sc(r);
  const posts = (s.responses || []).filter((x) => x.method === 'POST' && x.url.endsWith('/api/save'));
  assert.equal(posts.length, 1, `responses should hold the POST /api/save: ${dump(r)}`);
  assert.equal(posts[0].status, 200);
  assert.equal(s.navigated, false, 'saving by fetch does not navigate');
  assert.equal(s.dom_changed, true, 'the status line changed');
  const status = await evaluate(h.client, "() => document.getElementById('status').textContent");
  assert.equal(status, 'Saved: Ada Lovelace');
  assert.equal(h.fixture.hits().requests['POST /api/save'], 1, 'the site saw exactly one POST');
  // A state-changing tool links its evidence screenshot.
  const links = resourceLinksOf(r);
  assert.ok(links.length >= 1, `click should link its evidence: ${dump(r)}`);
  assert.match(links[0].uri, /^glassbox:\/\/artifact\/[0-9a-f]{64}$/);
  loop.evidenceLink = links[0];
});

test('follow the link to the second page', async () => {
  const r = await ok(h.client, 'browser_click', { target: loop.link, element: 'link to the second page' });
  const s = sc(r);
  assert.equal(s.navigated, true);
  assert.equal(s.title, 'Second page');
  assert.equal(s.url_before, h.url('/form.html'));
  assert.equal(s.url, h.url('/second.html'));
  assert.equal(s.status, 200);
});

test('evaluate document.title', async () => {
  assert.equal(await evaluate(h.client, '() => document.title'), 'Second page');
});

test('take a screenshot: a PNG comes back inline', async () => {
  const r = await ok(h.client, 'browser_take_screenshot', {});
  const imgs = imagesOf(r);
  assert.equal(imgs.length, 1, `one image expected: ${dump(r)}`);
  assert.equal(imgs[0].mimeType, 'image/png');
  assert.ok(isPng(imgs[0].data), 'the image starts with the PNG signature');
  assert.ok(textOf(r).length > 0, 'a text for the model comes first');
  assert.equal(r.content[0].type, 'text');
});

test('resources/read of the evidence link returns the PNG it names', async () => {
  const link = loop.evidenceLink;
  assert.ok(link, 'the click step produced an evidence link');
  const res = await h.client.readResource({ uri: link.uri });
  assert.equal(res.contents.length, 1);
  const c = res.contents[0];
  assert.equal(c.uri, link.uri);
  assert.equal(c.mimeType, 'image/png');
  assert.equal(typeof c.blob, 'string', 'a PNG is returned as a base64 blob');
  const png = Buffer.from(c.blob, 'base64');
  assert.ok(isPng(png), 'the blob is a PNG');
  const hash = link.uri.slice('glassbox://artifact/'.length);
  assert.equal(sha256(png), hash, 'the artifact is content-addressed: its sha256 is its name');
  if (/^[0-9a-f]{64}$/.test(link.name || '')) assert.equal(link.name, hash);
});

test('an unknown artifact is an error, not an empty read', async () => {
  await assert.rejects(h.client.readResource({ uri: `glassbox://artifact/${'0'.repeat(64)}` }));
});

test('the same evidence is listed in structuredContent', async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  const ev = sc(r).evidence || [];
  assert.ok(ev.length >= 1, `navigate records evidence: ${dump(r)}`);
  const shot = ev.find((e) => e.mime === 'image/png');
  assert.ok(shot, 'a PNG among the evidence');
  assert.match(shot.sha256, /^[0-9a-f]{64}$/);
  assert.equal(shot.uri, `glassbox://artifact/${shot.sha256}`);
  assert.ok(shot.size > 0);
  // Sanity of the call the agent did not need: a snapshot is read-only.
  const before = h.fixture.hits().paths['/form.html'];
  const snap = await callTool(h.client, 'browser_snapshot', {});
  assert.ok(!snap.isError);
  assert.equal(h.fixture.hits().paths['/form.html'], before, 'a snapshot does not reload the page');
});
