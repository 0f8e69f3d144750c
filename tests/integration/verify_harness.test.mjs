/*
 * The click harness: 200 targets at random places of a randomized layout
 * (inline links wrapping, transforms, scrolled containers, same-origin
 * iframes, open and closed shadow roots, some under a layer), each clicked
 * once by the ref of one snapshot. For every one, ok: true exactly when
 * the page's own listener on that element saw the click; every target
 * that nothing covers is clicked. The seed is random unless
 * GLASSBOX_HARNESS_SEED sets it, and every failure names it.
 */
import { test } from 'node:test';
import {
  assert, useGlassbox, callTool, ok, sc, dump, evaluate, snapshot,
} from '../e2e/lib.mjs';

const h = useGlassbox();

test('200 random targets: ok exactly when the page saw the click on that element', { timeout: 600000 }, async () => {
  const seed = Number(process.env.GLASSBOX_HARNESS_SEED || Math.floor(Math.random() * 1e9));
  const at = `(seed ${seed}; GLASSBOX_HARNESS_SEED=${seed} reproduces it)`;
  await ok(h.client, 'browser_navigate', { url: h.url(`/verify/harness.html?seed=${seed}`) });
  const targets = await evaluate(h.client, '() => window.__targets');
  assert.equal(targets.length, 200, at);
  const snap = await snapshot(h.client);
  const refOf = new Map();
  for (const node of snap.nodes) if (/^Target \d+$/.test(node.name || '')) refOf.set(node.name, node.ref);
  const outcomes = {};
  let before = await evaluate(h.client, '() => window.seenCounts()');
  for (const t of targets) {
    const ref = refOf.get(t.name);
    assert.ok(ref, `${t.name} (${t.kind}) has a ref in the snapshot ${at}`);
    const r = await callTool(h.client, 'browser_click', { target: ref });
    const after = await evaluate(h.client, '() => window.seenCounts()');
    const seen = (after[t.name] || 0) - (before[t.name] || 0);
    const others = Object.keys(after).filter((k) => k !== t.name && (after[k] || 0) !== (before[k] || 0));
    const what = `${t.name} (${t.kind}, cover ${t.cover}) ${at}: ${dump(r)}`;
    const key = `${t.kind}/${t.cover}/${sc(r).ok ? 'ok' : sc(r).error?.code}`;
    outcomes[key] = (outcomes[key] || 0) + 1;
    if (sc(r).ok) {
      assert.equal(r.isError, undefined, what);
      assert.equal(seen, 1, `ok: true, so the target's own listener saw exactly one click: ${what}`);
      assert.deepEqual(others, [], `and nothing else got it: ${what}`);
    } else {
      assert.equal(r.isError, true, what);
      assert.equal(seen, 0, `ok: false, so the target saw no click: ${what}`);
      assert.notEqual(t.cover, 'none', `a target nothing covers is clicked: ${what}`);
    }
    if (t.cover === 'full') assert.equal(sc(r).ok, false, `a target under a layer cannot be clicked: ${what}`);
    before = after;
  }
  process.stderr.write(`harness seed ${seed}: ${JSON.stringify(outcomes)}\n`);
});
