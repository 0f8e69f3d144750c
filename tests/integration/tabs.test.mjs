/*
 * Tabs: a popup becomes a second tab that can be listed, selected and
 * closed; browser_tabs new opens an empty one.
 */
import { test } from 'node:test';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { assert, useGlassbox, openGlassbox, ok, sc, dump, evaluate, snapshot, findRef, pollUntil, REPO_ROOT } from '../e2e/lib.mjs';

const h = useGlassbox();

async function tabs() {
  return sc(await ok(h.client, 'browser_tabs', { action: 'list' })).tabs;
}

test('a popup shows up as a second tab', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/popup.html') });
  const ref = findRef(await snapshot(h.client), 'button', 'Open popup');
  await ok(h.client, 'browser_click', { target: ref });
  // The popup's page is loaded by the browser, not by the click; give it the time it takes.
  const list = await pollUntil(async () => {
    const t = await tabs();
    return t.length === 2 && t.some((x) => x.url === h.url('/second.html')) ? t : null;
  });
  assert.ok(list, `two tabs expected: ${JSON.stringify(await tabs())}`);
  assert.deepEqual(list.map((t) => t.index).sort(), [0, 1]);
  assert.equal(list.filter((t) => t.current).length, 1, 'exactly one tab is current');
  const opener = list.find((t) => t.url === h.url('/popup.html'));
  assert.ok(opener, 'the opener is still listed');
  assert.equal(opener.title, 'Popup opener');
});

test('select the popup: tools act on it', async () => {
  const popup = (await tabs()).find((t) => t.url === h.url('/second.html'));
  const r = await ok(h.client, 'browser_tabs', { action: 'select', index: popup.index });
  const cur = sc(r).tabs?.find((t) => t.current);
  if (cur) assert.equal(cur.index, popup.index, dump(r));
  assert.equal(await evaluate(h.client, '() => document.title'), 'Second page');
});

test('close the popup: one tab is left and it is the opener', async () => {
  const popup = (await tabs()).find((t) => t.url === h.url('/second.html'));
  await ok(h.client, 'browser_tabs', { action: 'close', index: popup.index });
  const list = await tabs();
  assert.equal(list.length, 1, JSON.stringify(list));
  assert.equal(list[0].url, h.url('/popup.html'));
  assert.equal(list[0].current, true);
  assert.equal(await evaluate(h.client, '() => document.title'), 'Popup opener');
});

test('new opens a tab and makes it current; navigate works in it', async () => {
  await ok(h.client, 'browser_tabs', { action: 'new' });
  let list = await tabs();
  assert.equal(list.length, 2);
  const cur = list.find((t) => t.current);
  assert.ok(cur && cur.url !== h.url('/popup.html'), `the new tab is current: ${JSON.stringify(list)}`);
  await ok(h.client, 'browser_navigate', { url: h.url('/form.html') });
  list = await tabs();
  assert.ok(list.some((t) => t.url === h.url('/form.html') && t.current));
  assert.ok(list.some((t) => t.url === h.url('/popup.html') && !t.current));
});

test('selecting a tab that does not exist is an error naming the index', async () => {
  const r = await h.client.callTool({ name: 'browser_tabs', arguments: { action: 'select', index: 7 } });
  assert.equal(r.isError, true, dump(r));
  assert.match(r.content[0].text, /7/);
});

test('a tab change is verified and evidenced like any action: its expect is checked on the tab shown after it', async () => {
  const list = await tabs();
  const opener = list.find((t) => t.url === h.url('/popup.html'));
  const r = await ok(h.client, 'browser_tabs', { action: 'select', index: opener.index, expect: { title: 'Popup opener' } });
  assert.ok(sc(r).verdicts?.some((v) => v.check === 'title' && v.ok), dump(r));
  assert.ok(sc(r).evidence?.some((e) => e.kind === 'screenshot'), `a screenshot of the tab now shown: ${dump(r)}`);
  const bad = await h.client.callTool({ name: 'browser_tabs', arguments: { action: 'list', expect: { title: 'Not this page' } } });
  assert.equal(bad.isError, true, `an expectation that fails is an error, not ok: ${dump(bad)}`);
  assert.equal(sc(bad).error?.code, 'expectation_failed', dump(bad));
});

test('new with a url opens the tab at it, checked, settled and listed as browser_navigate would', async () => {
  const before = await tabs();
  const r = await ok(h.client, 'browser_tabs', { action: 'new', url: h.url('/form.html'), expect: { title: 'Account settings' } });
  const list = sc(r).tabs;
  assert.equal(list.length, before.length + 1, dump(r));
  const cur = list.find((t) => t.current);
  assert.equal(cur.url, h.url('/form.html'), dump(r));
  assert.equal(cur.title, 'Account settings');
  assert.equal(sc(r).navigated, true, dump(r));
  // the settle step watched the new tab, not the one before it: its load was seen
  assert.equal(sc(r).settle_timeout, undefined, dump(r));
  assert.match(r.content[0].text, /- \d+: \(current\) \[Account settings\]\(http:\/\/127\.0\.0\.1:\d+\/form\.html\)/, dump(r));
  assert.equal(await evaluate(h.client, '() => document.title'), 'Account settings');
});

test('new with a url the policy refuses opens nothing; a url with another action is refused', async () => {
  const before = await tabs();
  for (const url of ['file:///etc/passwd', 'http://evil.test/']) {
    const r = await h.client.callTool({ name: 'browser_tabs', arguments: { action: 'new', url } });
    assert.equal(r.isError, true, dump(r));
    assert.equal(sc(r).error.code, 'url_refused', dump(r));
    assert.ok(sc(r).blocked?.length, dump(r));
  }
  const r = await h.client.callTool({ name: 'browser_tabs', arguments: { action: 'select', index: 0, url: h.url('/form.html') } });
  assert.equal(r.isError, true, dump(r));
  assert.match(r.content[0].text, /'url' goes with action "new"/, dump(r));
  assert.deepEqual((await tabs()).map((t) => t.url), before.map((t) => t.url), 'no tab was opened or changed');
});

test('new with a url meets the navigate rules too: a rule on leaving the site holds it, and no tab opens', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'gb-tabs-'));
  const policy = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));
  policy.risk = { ...(policy.risk || {}), rules: [{ name: 'stay-on-site', decision: 'forbid', when: { kind: 'navigate', cross_site: true } }] };
  fs.writeFileSync(path.join(dir, 'policy.json'), JSON.stringify(policy));
  const gb = await openGlassbox({ config: path.join(dir, 'policy.json') });
  try {
    await ok(gb.client, 'browser_navigate', { url: h.url('/form.html') });
    const r = await gb.client.callTool({ name: 'browser_tabs', arguments: { action: 'new', url: h.url('/second.html').replace('127.0.0.1', 'shop.test') } });
    assert.equal(r.isError, true, dump(r));
    assert.equal(sc(r).gate?.rule, 'stay-on-site', dump(r));
    const list = sc(await ok(gb.client, 'browser_tabs', { action: 'list' })).tabs;
    assert.equal(list.length, 1, JSON.stringify(list));
    // the same site is not held
    await ok(gb.client, 'browser_tabs', { action: 'new', url: h.url('/second.html') });
  } finally {
    await gb.close();
    gb.removeDataDir();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
