/*
 * Egress drill: a page on an allowed host probes the DevTools port of its
 * own browser (fetch, XHR, <img>, a WebSocket to /devtools/browser/<id>,
 * and browser_navigate to it), under a policy that allows 127.0.0.1 on
 * every port (fixtures/policy/egress-devtools.json). Glassbox refuses
 * loopback destinations on that port whatever the policy says (rule
 * "devtools-port"): in the Fetch layer and in the proxy, each alone. The
 * port and the browser's id come from its profile's DevToolsActivePort (profileDirs).
 */
import { describe, test } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, sc, dump, profileDirs } from '../e2e/lib.mjs';
import { useDrill, drillLog, runProbe, refusalsFor, knownLeak, LAYER_SETS } from './egress-drills.mjs';

/* {port, path} of the session's browser, from its profile dir. */
function devtoolsOf(dataDir) {
  for (const dir of profileDirs(dataDir)) {
    const f = path.join(dir, 'DevToolsActivePort');
    if (fs.existsSync(f)) {
      const [port, p] = fs.readFileSync(f, 'utf8').split('\n');
      return { port: Number(port), path: p };
    }
  }
  return null;
}

const CHANNELS = ['fetch', 'xhr', 'img', 'websocket'];

for (const [name, layers] of Object.entries(LAYER_SETS)) {
  if (name === 'tool') continue; // below: the tool layer judges tool URLs only
  describe(`DevTools port, layers: ${name}`, () => {
    const run = useDrill({ layers, policyFile: 'egress-devtools.json', allowMain: false });
    const layerName = Object.entries(layers)
      .map(([k, v]) => `${k} ${v ? 'on' : 'off'}`)
      .join(', ');
    const seen = {};

    for (const host of ['127.0.0.1', 'localhost']) {
      test(`[${layerName}] a page probes http://${host}:<devtools>/json/version and its browser's WebSocket`, async () => {
        const log = drillLog(run);
        await log.call('browser_navigate', { url: run.local('/egress/links.html') });
        const dt = devtoolsOf(run.gb.dataDir);
        assert.ok(dt && dt.port > 0 && dt.path.startsWith('/devtools/browser/'), `DevToolsActivePort read: ${JSON.stringify(dt)}`);
        const res = await runProbe(run, log, {
          origin: run.local(''),
          params: { chs: CHANNELS.join(','), base: `http://${host}:${dt.port}`, path: '/json/version', wspath: dt.path },
        });
        await log.drainUntil((l) =>
          CHANNELS.filter((c) => !knownLeak(run, c)).every(
            (c) => refusalsFor(l, c === 'websocket' ? { pathPart: dt.path, tunnel: `${host}:${dt.port}` } : { pathPart: `:${dt.port}/json/version` }).length > 0,
          ),
        );
        seen[host] = { log, res, dt };
      });

      for (const c of CHANNELS) {
        test(`[${layerName}] ${c} to ${host}:<devtools> is refused (rule devtools-port)`, { todo: knownLeak(run, c) }, () => {
          assert.ok(seen[host], `the probe of ${host} above ran to its end`);
          const { log, res, dt } = seen[host];
          const got = refusalsFor(log, c === 'websocket' ? { pathPart: dt.path, tunnel: `${host}:${dt.port}` } : { pathPart: `:${dt.port}/json/version` });
          assert.ok(got.length > 0, `${c}: refused: ${log.dump()}`);
          for (const b of got) {
            assert.equal(b.rule, 'devtools-port', JSON.stringify(b));
            assert.ok(run.enabled.includes(b.layer), JSON.stringify(b));
          }
          assert.notEqual(res[c].denied, c === 'websocket' ? 'message: hello' : 'loaded', `${c}: the page got no answer from DevTools: ${JSON.stringify(res)}`);
          // what the browser received: no DevTools answer on that port
          for (const r of log.results)
            for (const resp of sc(r).responses || [])
              assert.ok(!(resp.url.includes(`:${dt.port}/`) && resp.status === 200), `DevTools answered: ${dump(r)}`);
        });
      }
    }

    test(`[${layerName}] browser_navigate to the DevTools port is refused`, async () => {
      const log = drillLog(run);
      const dt = devtoolsOf(run.gb.dataDir);
      const url = `http://127.0.0.1:${dt.port}/json/version`;
      const r = await log.call('browser_navigate', { url });
      await log.drainUntil((l) => refusalsFor(l, { pathPart: `:${dt.port}/json/version` }).length > 0);
      const got = refusalsFor(log, { pathPart: `:${dt.port}/json/version` });
      assert.ok(got.length > 0, `refused: ${log.dump()}`);
      for (const b of got) assert.equal(b.rule, 'devtools-port', JSON.stringify(b));
      const text = sc(await log.call('browser_evaluate', { function: '() => document.body ? document.body.innerText : ""' })).result || '';
      assert.doesNotMatch(text, /webSocketDebuggerUrl|Browser/, `the page does not show DevTools' answer: ${text} ${dump(r)}`);
    });
  });
}

describe('DevTools port, layers: tool', () => {
  const run = useDrill({ layers: LAYER_SETS.tool, policyFile: 'egress-devtools.json', allowMain: false });

  test('[tool on, fetch off, proxy off] browser_navigate to the DevTools port is refused by the tool', async () => {
    const log = drillLog(run);
    await log.call('browser_navigate', { url: run.local('/egress/links.html') });
    const dt = devtoolsOf(run.gb.dataDir);
    for (const host of ['127.0.0.1', 'localhost', '[::1]']) {
      const url = `http://${host}:${dt.port}/json/version`;
      const r = await log.call('browser_navigate', { url });
      assert.equal(r.isError, true, dump(r));
      const got = log.blocked.filter((b) => b.url === url);
      assert.equal(got.length, 1, log.dump());
      assert.equal(got[0].layer, 'tool');
      assert.equal(got[0].rule, 'devtools-port');
    }
    const href = sc(await log.call('browser_evaluate', { function: '() => location.href' })).result;
    assert.equal(href, run.local('/egress/links.html'), 'the page did not move');
  });
});
