/*
 * Bad arguments: a missing, mistyped, out-of-range or unknown argument is a
 * tool error (isError) whose text names the argument; nothing runs.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, textOf, dump, evaluate } from '../e2e/lib.mjs';

const h = useGlassbox();

const cases = [
  ['browser_navigate', {}, 'url'],
  ['browser_navigate', { url: 42 }, 'url'],
  ['browser_navigate', { url: 'http://127.0.0.1:1/', bogus: true }, 'bogus'],
  ['browser_click', {}, 'target'],
  ['browser_click', { target: '#save', button: 'sideways' }, 'button'],
  ['browser_click', { target: '#save', doubleClick: 'yes' }, 'doubleClick'],
  ['browser_type', { target: '#name' }, 'text'],
  ['browser_select_option', { target: '#country', values: 'fr' }, 'values'],
  ['browser_handle_dialog', {}, 'accept'],
  ['browser_tabs', { action: 'explode' }, 'action'],
  ['browser_snapshot', { maxChars: 'many' }, 'maxChars'],
  ['browser_evaluate', {}, 'function'],
  ['browser_press_key', {}, 'key'],
  ['browser_click', { target: '#save', expect: 'Saved' }, 'expect'],
];

test('set up a page', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
});

for (const [tool, args, name] of cases) {
  test(`${tool}(${JSON.stringify(args)}) names '${name}'`, async () => {
    const hits = h.fixture.hits();
    const r = await callTool(h.client, tool, args);
    assert.equal(r.isError, true, dump(r));
    assert.match(textOf(r), new RegExp(`\\b${name}\\b`), `the error names ${name}: ${textOf(r)}`);
    assert.deepEqual(h.fixture.hits(), hits, 'nothing reached the site');
  });
}

test('after bad arguments the page is as it was', async () => {
  assert.equal(await evaluate(h.client, "() => document.getElementById('status').textContent"), 'Not saved yet');
  assert.equal(await evaluate(h.client, '() => location.pathname'), '/form.html');
});

test('an unknown tool is refused', async () => {
  let r;
  try {
    r = await callTool(h.client, 'browser_teleport', {});
  } catch (err) {
    assert.match(String(err.message), /browser_teleport/);
    return;
  }
  assert.equal(r.isError, true, dump(r));
  assert.match(textOf(r), /browser_teleport/);
});
