/*
 * Navigation: redirects are followed and reported, error statuses are
 * reported rather than hidden, refused URL schemes never reach the browser,
 * and navigate_back goes back.
 */
import { test } from 'node:test';
import { assert, useGlassbox, callTool, ok, sc, textOf, dump, evaluate, assertToolError } from '../e2e/lib.mjs';

const h = useGlassbox();

test('a redirect chain ends on the final URL with status 200', async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/redirect/3') });
  const s = sc(r);
  assert.equal(s.url, h.url('/final'));
  assert.equal(s.status, 200);
  assert.equal(s.title, 'Final page');
  assert.equal(s.navigated, true);
  const hits = h.fixture.hits().paths;
  for (const p of ['/redirect/3', '/redirect/2', '/redirect/1', '/final'])
    assert.equal(hits[p], 1, `${p} requested once: ${JSON.stringify(hits)}`);
  assert.equal(await evaluate(h.client, '() => location.pathname'), '/final');
});

test('a 404 is reported with its status, not hidden', async () => {
  const r = await callTool(h.client, 'browser_navigate', { url: h.url('/missing.html') });
  const s = sc(r);
  assert.equal(s.status, 404, `status 404 expected: ${dump(r)}`);
  assert.equal(s.url, h.url('/missing.html'));
  assert.match(textOf(r), /404/, 'the text for the model mentions the 404');
  assert.equal(h.fixture.hits().paths['/missing.html'], 1);
  assert.match(await evaluate(h.client, '() => document.body.innerText'), /404 Not found/);
});

test('a 500 is reported with its status', async () => {
  const r = await callTool(h.client, 'browser_navigate', { url: h.url('/status/500') });
  assert.equal(sc(r).status, 500, dump(r));
  assert.match(textOf(r), /500/);
});

test('about:blank opens an empty page, and an about:srcdoc frame is not refused', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/second.html') });
  const r = await callTool(h.client, 'browser_navigate', { url: 'about:blank' });
  assert.ok(!r.isError, `about:blank is allowed: ${dump(r)}`);
  assert.deepEqual(sc(r).blocked || [], [], `nothing refused: ${dump(r)}`);
  assert.equal(await evaluate(h.client, '() => location.href'), 'about:blank');
  assert.equal(await evaluate(h.client, '() => document.body.innerHTML'), '');
  await ok(h.client, 'browser_navigate', { url: h.url('/second.html') });
  const text = await evaluate(h.client, `async () => {
    const f = document.createElement('iframe');
    f.srcdoc = '<p id=s>from srcdoc</p>';
    const loaded = new Promise((res) => f.addEventListener('load', res, { once: true }));
    document.body.appendChild(f);
    await loaded;
    return f.contentDocument.getElementById('s').textContent + ' ' + f.contentWindow.location.href;
  }`);
  assert.equal(text, 'from srcdoc about:srcdoc');
  const after = await callTool(h.client, 'browser_evaluate', { function: '() => 1' });
  assert.deepEqual(sc(after).blocked || [], [], `nothing refused: ${dump(after)}`);
});

const refused = [
  ['about:settings', /about/i],
  ['file:///etc/passwd', /file/i],
  ['chrome://version', /chrome/i],
  ['javascript:alert(1)', /javascript/i],
  ['data:text/html,x', /data/i],
];

for (const [url, scheme] of refused) {
  test(`${url} is refused and nothing reaches the site or the page`, async () => {
    await ok(h.client, 'browser_navigate', { url: h.url('/second.html') });
    const hitsBefore = h.fixture.hits();
    const r = await callTool(h.client, 'browser_navigate', { url });
    const text = assertToolError(r, `navigate ${url}`);
    assert.match(text, scheme, `the error names the scheme: ${text}`);
    assert.match(text, /refus|not allowed|forbidden|blocked|disallowed|denied/i, `the error says it is refused: ${text}`);
    assert.ok(sc(r).error?.code, `error.code set: ${dump(r)}`);
    assert.equal(sc(r).navigated ?? false, false);
    assert.deepEqual((sc(r).dialogs || []), [], 'no dialog opened');
    assert.deepEqual(h.fixture.hits(), hitsBefore, 'the site saw no request');
    assert.equal(await evaluate(h.client, '() => location.href'), h.url('/second.html'), 'the page did not move');
    assert.equal(await evaluate(h.client, '() => document.title'), 'Second page');
  });
}

test('navigate_back returns to the previous page', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  await ok(h.client, 'browser_navigate', { url: h.url('/second.html') });
  const r = await ok(h.client, 'browser_navigate_back', {});
  const s = sc(r);
  assert.equal(s.url_before, h.url('/second.html'));
  assert.equal(s.url, h.url('/form.html'));
  assert.equal(s.title, 'Account settings');
  assert.equal(await evaluate(h.client, '() => location.pathname'), '/form.html');
});

test('a page whose requests never finish from the browser\'s view still navigates and reads back', async () => {
  const r = await ok(h.client, 'browser_navigate', { url: h.url('/unread.html') });
  assert.equal(sc(r).title, 'Unread response', dump(r));
  const e = await ok(h.client, 'browser_evaluate', { function: '() => document.title' });
  assert.equal(sc(e).result, 'Unread response', dump(e));
});
