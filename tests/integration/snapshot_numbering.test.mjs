/*
 * Refs numbered as Playwright numbers them, with real Chromium and the MCP
 * SDK client: an element with an empty box gets no ref (the body of a page
 * whose only child is positioned), a <label> that holds a control and a
 * nameless <form> are generics that take their numbers, a frame's prefix
 * is its place among the page's frames (hidden ones counted), and the code
 * of an action inside a frame goes through Playwright's frame locator.
 */
import { test } from 'node:test';
import { assert, useGlassbox, ok, textOf } from '../e2e/lib.mjs';

const h = useGlassbox();

function snapshotOf(result) {
  const m = /### Snapshot\n```yaml\n([\s\S]*?)\n```/.exec(textOf(result));
  assert.ok(m, `the answer carries a snapshot:\n${textOf(result)}`);
  return m[1];
}

const codeOf = (result) => (/### Ran Playwright code\n```js\n([\s\S]*?)\n```/.exec(textOf(result)) || [])[1];

test('an element with an empty box gets no ref; boxes as Playwright writes them', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/numbering/boxes.html') });
  const r = await ok(h.client, 'browser_snapshot', { boxes: true });
  assert.equal(snapshotOf(r), '- button "click" [ref=e1] [box=100,50,80,40]');
  await ok(h.client, 'browser_click', { target: 'e1' });
});

test('labels that hold their controls and a nameless form take numbers, as in Playwright', async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/numbering/form.html') });
  const snap = snapshotOf(r);
  assert.match(snap, /^- generic \[ref=e2\]:\n {2}- generic \[ref=e3\]:\n {4}- textbox "Name" \[ref=e4\]/, snap);
  assert.match(snap, /- slider "Age" \[ref=e6\]/, snap);
  assert.match(snap, /- checkbox "Subscribe to newsletter" \[ref=e8\]/, snap);
  // a label of text alone is text: it takes no number
  assert.match(snap, /- radio "Red" \[ref=e9\]/, snap);
  const t = await ok(h.client, 'browser_click', { target: 'e8' });
  assert.equal(codeOf(t), "await page.getByRole('checkbox', { name: 'Subscribe to newsletter' }).click();");
});

test("a frame's prefix is its place among the page's frames, hidden ones counted; code goes through the frame locator", async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/numbering/frames.html') });
  const snap = snapshotOf(r);
  assert.match(snap, /- iframe \[ref=e3\]:\n {4}- generic \[ref=f1e1\]:\n {6}- button "World" \[ref=f1e2\]/, snap);
  assert.match(snap, /- iframe \[ref=f1e4\]:\n {10}- paragraph \[ref=f3e2\]: Nested/, snap);
  const c = await ok(h.client, 'browser_click', { target: 'f1e2' });
  assert.equal(codeOf(c), "await page.locator('iframe').first().contentFrame().getByRole('button', { name: 'World' }).click();");
  // the numbers stay while the frames do
  assert.match(snapshotOf(await ok(h.client, 'browser_snapshot', {})), /- paragraph \[ref=f3e2\]: Nested/);
});
