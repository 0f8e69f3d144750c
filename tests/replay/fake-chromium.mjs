#!/usr/bin/env node
/*
 * fake-chromium.mjs - plays a recorded browser back to glassbox: started
 * in Chromium's place (it takes Chromium's flags), it writes
 * DevToolsActivePort, serves the DevTools websocket and answers each call
 * with the recorded answer to the same call, sending the recorded events
 * in their recorded order. No page runs: what glassbox does with the
 * answers (its gate, ledger, verification, evidence) is what is tested.
 *
 *   fake-chromium.mjs TRACE.jsonl.gz SITE_PORT [chromium flags...]
 *
 * TRACE is what tests/replay/record.mjs wrote ("> " sent, "< " received);
 * PORT in it becomes SITE_PORT. A live call is matched to the recorded
 * call with the same method, session, node, world, object group and
 * script (its first 200 characters) whose answer comes first from where the replay is. The
 * recorded messages go out in their order, each once the call recorded
 * just before it has been made (an event follows what caused it) and,
 * for an answer, once its own call has. When glassbox stops calling
 * while the replay waits for a call it does not make, that call is given
 * up after a short pause (or the answer dropped); a call that was not
 * recorded gets the answer of the last recorded call like it, or {}.
 * GLASSBOX_REPLAY_DEBUG=FILE notes what was given up or not recorded.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import zlib from 'node:zlib';

// ws is a dependency of the node tests' package (tests/e2e)
const { WebSocketServer } = createRequire(new URL('../e2e/package.json', import.meta.url))('ws');

const [trace, sitePort, ...flags] = process.argv.slice(2);
const userDataDir = flags.find((f) => f.startsWith('--user-data-dir='))?.slice('--user-data-dir='.length);
if (!trace || !sitePort || !userDataDir) {
  process.stderr.write('usage: fake-chromium.mjs TRACE SITE_PORT --user-data-dir=DIR [flags...]\n');
  process.exit(2);
}
const IDLE_MS = 2000;
const debug = process.env.GLASSBOX_REPLAY_DEBUG ? fs.openSync(process.env.GLASSBOX_REPLAY_DEBUG, 'a') : null;
const note = (s) => debug !== null && fs.writeSync(debug, s + '\n');

const lines = zlib.gunzipSync(fs.readFileSync(trace)).toString('utf8').replaceAll('127.0.0.1:PORT', `127.0.0.1:${sitePort}`)
  .split('\n').filter(Boolean);
const sent = [];     // recorded calls: {msg, key, used}
const incoming = []; // recorded answers and events, in order: {msg, waitsFor?: recorded id}
let lastSent;
for (const line of lines) {
  const msg = JSON.parse(line.slice(2));
  if (line[0] === '>') {
    sent.push({ msg, key: keyOf(msg), used: false });
    lastSent = msg.id;
  } else {
    incoming.push({ msg, waitsFor: msg.id, after: lastSent });
  }
}
const answerOf = new Map(incoming.filter((m) => m.waitsFor !== undefined).map((m) => [m.waitsFor, m.msg]));
const answerAt = new Map(incoming.map((m, i) => [m.waitsFor, i]).filter(([id]) => id !== undefined));

/* What tells two calls of one method apart: their session, script, and
 * the node, world and object group they name (a ref resolved ahead is not
 * the action's own resolve). */
function keyOf(m) {
  const p = m.params || {};
  const script = p.functionDeclaration ?? p.expression ?? p.type ?? '';
  const node = `${p.backendNodeId ?? ''}|${p.executionContextId ?? ''}|${p.objectGroup || ''}`;
  return `${m.method}|${m.sessionId || ''}|${node}|${String(script).slice(0, 200)}`;
}

const liveIdOf = new Map(); // recorded id -> live id
const made = new Set();     // recorded calls glassbox made (or will not make)
const lastOfKey = new Map(); // key -> recorded answer
let next = 0;               // the next recorded incoming message to send
let idleTimer = null;

function send(ws, msg) {
  ws.send(JSON.stringify(msg));
}

/* Sends what may go now: recorded messages in order, each once the call
 * recorded before it has been made (an event follows what caused it) and,
 * for an answer, once its own call has. */
function flush(ws) {
  while (next < incoming.length) {
    const m = incoming[next];
    if (m.after !== undefined && !made.has(m.after)) break;
    if (m.waitsFor !== undefined) {
      const live = liveIdOf.get(m.waitsFor);
      if (live === undefined) break;
      send(ws, { ...m.msg, id: live });
    } else {
      send(ws, m.msg);
    }
    next++;
  }
  clearTimeout(idleTimer);
  if (next < incoming.length) {
    idleTimer = setTimeout(() => {
      // glassbox waits and will not make the call the next message needs
      const m = incoming[next];
      if (m.after !== undefined && !made.has(m.after)) {
        note(`not made: recorded call ${m.after}`);
        made.add(m.after);
      } else {
        note(`skipped: ${JSON.stringify(m.msg).slice(0, 200)}`);
        next++;
      }
      flush(ws);
    }, IDLE_MS);
  }
}

function onCall(ws, call) {
  const key = keyOf(call);
  // the recorded call like it whose answer comes first from here on
  // (one the replay has passed was never made: glassbox went another way)
  let rec = null;
  for (const s of sent) {
    const at = answerAt.get(s.msg.id) ?? Infinity;
    if (!s.used && s.key === key && at >= next && (!rec || at < (answerAt.get(rec.msg.id) ?? Infinity))) rec = s;
  }
  if (rec) {
    rec.used = true;
    liveIdOf.set(rec.msg.id, call.id);
    made.add(rec.msg.id);
    const answer = answerOf.get(rec.msg.id);
    if (answer) lastOfKey.set(key, answer);
    flush(ws);
    return;
  }
  note(`not recorded: ${key.slice(0, 200)}`);
  const like = lastOfKey.get(key);
  const reply = like ? { ...like, id: call.id } : { id: call.id, result: {} };
  if (call.sessionId) reply.sessionId = call.sessionId;
  send(ws, reply);
}

const wss = new WebSocketServer({ host: '127.0.0.1', port: 0, path: '/devtools/browser/replay', maxPayload: 256 * 1024 * 1024 });
wss.on('connection', (ws) => {
  ws.on('message', (data) => {
    let call;
    try {
      call = JSON.parse(data.toString('utf8'));
    } catch {
      return;
    }
    if (call.method === 'Browser.close') {
      send(ws, { id: call.id, result: {} });
      setTimeout(() => process.exit(0), 50);
      return;
    }
    onCall(ws, call);
  });
  ws.on('close', () => process.exit(0));
  flush(ws);
});
wss.on('listening', () => {
  const { port } = wss.address();
  fs.writeFileSync(path.join(userDataDir, 'DevToolsActivePort'), `${port}\n/devtools/browser/replay\n`);
});
process.on('SIGTERM', () => process.exit(0));
