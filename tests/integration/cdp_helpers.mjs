/*
 * cdp_helpers.mjs - what the CDP endpoint tests share: `glassbox serve`
 * with tenants whose policy offers CDP, POST /sessions, and a raw
 * websocket client (ws) for the hostile cases.
 */
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { WebSocket } from '../e2e/cdp-libs.mjs';
import { startServe } from './serve_helpers.mjs';
import { REPO_ROOT, glassboxBin, auditRecords, pollUntil } from '../e2e/lib.mjs';

export const LOOPBACK = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'loopback.json'), 'utf8'));

/* The loopback test policy with cdp (and anything else) set. */
export function cdpPolicy(extra = {}) {
  return { ...structuredClone(LOOPBACK), cdp: 'allow', ...extra };
}

/* glassbox serve with tenants a and b offering CDP, and c denying it. */
export async function startCdpServe({ policyA = cdpPolicy(), policyB = cdpPolicy(), admin = true, limits = {} } = {}) {
  return startServe({
    tenants: { a: { policy: policyA }, b: { policy: policyB }, c: { policy: structuredClone(LOOPBACK) } },
    admin,
    limits: { unused_ttl_s: 600, ...limits },
  });
}

export const baseOf = (svc) => svc.url.replace(/\/mcp$/, '');

/* POST /sessions as tenant: {status, json}. */
export async function postSession(svc, tenant) {
  const res = await fetch(baseOf(svc) + '/sessions', { method: 'POST', headers: { authorization: `Bearer ${svc.tokens[tenant]}` } });
  const text = await res.text();
  let json;
  try {
    json = JSON.parse(text);
  } catch {}
  return { status: res.status, json, text };
}

/* A new session of tenant; its endpoint with the token in the query. */
export async function newSession(svc, tenant) {
  const r = await postSession(svc, tenant);
  if (r.status !== 201) throw new Error(`POST /sessions: ${r.status} ${r.text}`);
  return { id: r.json.id, wsEndpoint: r.json.wsEndpoint, url: `${r.json.wsEndpoint}?token=${svc.tokens[tenant]}` };
}

/*
 * A raw CDP client: call(method, params, sessionId) resolves with the
 * whole reply (result or error); events are kept in .events.
 */
export function rawClient(url, opts = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { maxPayload: 512 << 20, ...opts });
    const pending = new Map();
    const c = {
      ws,
      events: [],
      others: [],
      nextId: 1,
      closed: new Promise((res) => ws.on('close', (code, reason) => res({ code, reason: String(reason) }))),
      send(obj) {
        ws.send(typeof obj === 'string' ? obj : JSON.stringify(obj));
      },
      call(method, params = {}, sessionId) {
        const id = c.nextId++;
        const msg = { id, method, params };
        if (sessionId) msg.sessionId = sessionId;
        return new Promise((res) => {
          pending.set(id, res);
          ws.send(JSON.stringify(msg));
        });
      },
      close() {
        ws.close();
      },
    };
    ws.on('message', (data) => {
      const m = JSON.parse(String(data));
      if (m.id !== undefined && pending.has(m.id)) {
        pending.get(m.id)(m);
        pending.delete(m.id);
      } else if (m.method) c.events.push(m);
      else c.others.push(m);
    });
    ws.once('open', () => resolve(c));
    ws.once('unexpected-response', (req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
}

/* The HTTP answer to a websocket upgrade that is refused: {status, body}. */
export async function refusedUpgrade(url, headers = {}) {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { headers });
    ws.once('unexpected-response', (req, res) => {
      let body = '';
      res.on('data', (d) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode, body }));
    });
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('error', () => {});
  });
}

/* The tenant's audit records of kind (all when kind is omitted). */
export function records(svc, tenant, kind) {
  const all = auditRecords(svc.dataDir, tenant);
  return kind ? all.filter((r) => r.kind === kind) : all;
}

/* Waits until the tenant's trail has a record for which pred holds. */
export async function waitRecord(svc, tenant, pred, what) {
  const found = await pollUntil(() => records(svc, tenant).find(pred), { deadlineMs: 30000 });
  if (!found) throw new Error(`no audit record ${what}: ${JSON.stringify(records(svc, tenant).map((r) => r.kind))}`);
  return found;
}

/* `glassbox audit verify` of the data dir: {status, out}. */
export function auditVerify(dataDir) {
  const r = spawnSync(glassboxBin(), ['audit', 'verify', '--data-dir', dataDir], { encoding: 'utf8' });
  return { status: r.status, out: r.stdout + r.stderr };
}
