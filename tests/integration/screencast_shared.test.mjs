/*
 * screencast_shared.test.mjs - a session recording (the tenant's
 * "screencast" policy) and the web console's live view on the same page,
 * against a real Chromium behind `glassbox serve`, the agent on the
 * official MCP SDK client: the page has one screencast that both read.
 *   - while a viewer watches, an action records its frames (PNG, no larger
 *     than the policy's size) and the viewer keeps getting frames;
 *   - when the action ends the viewer's frames go on (JPEG again): the
 *     recording leaving does not stop the live view;
 *   - once nobody watches, the live view leaves, an action still records
 *     alone, and then the browser is told to stop and sends no more frames
 *     (read from a copy of the CDP traffic, GLASSBOX_CDP_TRACE).
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { assert, ok, sc, dump, startFixtureServer, auditRecords, pollUntil, isPng, pngSize, REPO_ROOT } from '../e2e/lib.mjs';
import { startServe, consoleLogin } from './serve_helpers.mjs';

const POLICY = {
  ...JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8')),
  screencast: { fps: 2, max_width: 320, max_height: 240, max_frames: 30 },
};
const WAIT_MS = 3000; /* how long the recorded action keeps the page busy */

let fixture, svc, agent, traceDir;

before(async () => {
  fixture = await startFixtureServer();
  traceDir = fs.mkdtempSync('/tmp/glassbox-cast-trace-');
  svc = await startServe({
    tenants: { acme: { policy: POLICY } },
    limits: { unused_ttl_s: 3600, idle_ttl_s: 3600 },
    admin: true,
    console: { frames_per_second: 5, credentials: [{ id: 'c-vic', name: 'vic', tenant: 'acme', role: 'viewer' }] },
    env: { GLASSBOX_CDP_TRACE: traceDir },
  });
  agent = await svc.connect('acme');
});

after(async () => {
  await svc?.stop();
  svc?.removeDataDir();
  await fixture?.close();
  if (traceDir && process.env.GLASSBOX_KEEP_DATA !== '1') fs.rmSync(traceDir, { recursive: true, force: true });
});

/* A live viewer: asks for the newest frame every 250 ms (the console
 * allows 5 a second) until stop(); frames: [{at, type, width, height}]. */
function watch(cookie) {
  const v = { frames: [], errors: [], stopped: false, done: null };
  const url = `${svc.adminUrl}/console/sessions/${agent.sessionId}/frame`;
  v.done = (async () => {
    let seq = 0;
    while (!v.stopped) {
      const r = await fetch(`${url}?after=${seq}`, { headers: { cookie } });
      if (r.status === 200) {
        const body = Buffer.from(await r.arrayBuffer());
        const type = r.headers.get('content-type');
        seq = Number(r.headers.get('x-frame-seq'));
        const size = type === 'image/png' && isPng(body) ? pngSize(body) : {};
        v.frames.push({ at: Date.now(), type, ...size });
      } else if (r.status !== 204 && r.status !== 429) {
        v.errors.push(`${r.status} ${await r.text()}`);
      } else {
        await r.arrayBuffer();
      }
      await new Promise((res) => setTimeout(res, 250));
    }
  })();
  v.stop = async () => {
    v.stopped = true;
    await v.done;
  };
  return v;
}

/* The tool_call record of an operation, once the keeper wrote it. */
async function recordOf(op) {
  let rec;
  await pollUntil(() => {
    rec = auditRecords(svc.dataDir, 'acme').find((r) => r.kind === 'tool_call' && r.operation === op);
    return !!rec;
  }, { deadlineMs: 30000 });
  return rec;
}

/* An action that keeps the ticking page busy for WAIT_MS; its record. */
async function recordedAction() {
  const started = Date.now();
  const r = await ok(agent.client, 'browser_evaluate', {
    function: `() => new Promise((done) => setTimeout(() => done(document.getElementById('tick').textContent), ${WAIT_MS}))`,
  });
  const ended = Date.now();
  const rec = await recordOf(sc(r).operation_id);
  assert.ok(rec.body.screencast?.length >= 1, `the action recorded frames: ${dump(rec.body)}`);
  for (const f of rec.body.screencast) {
    assert.ok(f.width <= 320 && f.height <= 240, `a recorded frame is at most 320x240: ${f.width}x${f.height}`);
    assert.ok(rec.artifacts.some((a) => a.kind === 'screencast_frame' && a.sha256 === f.sha256), 'the record signs the frame');
  }
  return { started, ended, rec };
}

/* The CDP traffic copied so far: [{dir: '>'|'<', method}] of the screencast's messages. */
function castTraffic() {
  const out = [];
  for (const f of fs.readdirSync(traceDir)) {
    for (const line of fs.readFileSync(path.join(traceDir, f), 'utf8').split('\n')) {
      const m = /"method":"(Page\.(?:startScreencast|stopScreencast|screencastFrame|screencastFrameAck))"/.exec(line.slice(0, 4096));
      if (m) out.push({ dir: line[0], method: m[1] });
    }
  }
  return out;
}

const status = async (cookie) =>
  (await (await fetch(`${svc.adminUrl}/console/sessions/${agent.sessionId}/status`, { headers: { cookie } })).json()).live;

test('a recording and a live viewer share the page\'s screencast: both get frames, neither stops the other\'s, and it stops when both are done', async () => {
  await ok(agent.client, 'browser_navigate', { url: `${fixture.url}/ticker.html` });
  const { cookie } = await consoleLogin(svc, 'c-vic');
  const viewer = watch(cookie);
  try {
    await pollUntil(() => viewer.frames.length > 0, { deadlineMs: 60000 });
    assert.equal(viewer.frames[0].type, 'image/jpeg', 'the live view alone gets JPEG frames');

    // an action records while the viewer watches
    const { started, ended } = await recordedAction();
    const during = viewer.frames.filter((f) => f.at > started && f.at <= ended);
    assert.ok(during.length >= 1, `the viewer got frames while the action recorded: ${JSON.stringify(viewer.frames)}`);
    const shared = during.filter((f) => f.type === 'image/png');
    assert.ok(shared.length >= 1, `while recording, the viewer reads the recording's PNG frames: ${JSON.stringify(during)}`);
    for (const f of shared) assert.ok(f.width <= 320 && f.height <= 240, `the shared screencast has the smaller size: ${f.width}x${f.height}`);

    // the recording left: the live view's frames go on, as JPEG again
    await pollUntil(() => viewer.frames.some((f) => f.at > ended + 500 && f.type === 'image/jpeg'), { deadlineMs: 30000 });
    assert.deepEqual(viewer.errors, []);
  } finally {
    await viewer.stop();
  }

  // nobody watches: the live view leaves its screencast (after the console's 10 s)
  await pollUntil(async () => (await status(cookie)).screencast === false, { deadlineMs: 60000, intervalMs: 500 });
  // a recording alone still gets its frames
  await recordedAction();
  // and then the browser is told to stop, and sends no more frames
  await pollUntil(() => {
    const sent = castTraffic().filter((m) => m.dir === '>' && /Screencast$/.test(m.method));
    return sent.length > 0 && sent[sent.length - 1].method === 'Page.stopScreencast';
  }, { deadlineMs: 30000 });
  const frames = () => castTraffic().filter((m) => m.dir === '<' && m.method === 'Page.screencastFrame').length;
  await new Promise((res) => setTimeout(res, 1500)); /* a frame still in flight */
  const n = frames();
  await new Promise((res) => setTimeout(res, 3000));
  assert.equal(frames(), n, 'no frames arrive once the screencast stopped, though the page keeps changing');

  // the service and the session keep serving
  await ok(agent.client, 'browser_evaluate', { function: "() => document.getElementById('tick').textContent" });
  assert.equal((await fetch(`${svc.adminUrl}/healthz`)).status, 200);
});
