/*
 * Two `glassbox serve` replicas sharing one PostgreSQL (a throwaway
 * server started here, tests/postgres/run.sh), each with a data dir of
 * its own: an approval asked for by a session on replica 2 is granted
 * through replica 1's admin path (`glassbox approvals` on replica 1's
 * data dir) and spent on replica 2 exactly once; an operation that was
 * acting when replica 2 was killed is `unknown` in the shared ledger once
 * another replica opens the store, and replica 2 started again removes
 * its dead run's sessions from the registry; nothing goes to a local
 * SQLite file.
 */
import { test, before, after } from 'node:test';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { assert, ok, callTool, sc, textOf, pollUntil, glassboxBin, newDataDir } from '../e2e/lib.mjs';
import {
  GATES_POLICY, approvals, decide, seen, buttonRef, assertApprovalRequired, assertApprovalRefused,
} from './gates_helpers.mjs';
import { replicaEnv } from './replica_helpers.mjs';

const DELETE = 'POST /orders/delete';
// the shipped gates policy, with approvals that outlive a slow machine
const POLICY = { ...JSON.parse(fs.readFileSync(GATES_POLICY, 'utf8')) };
POLICY.risk = { ...POLICY.risk, approval_ttl_seconds: 600 };

const env = replicaEnv();
const replicas = env.replicas;
let pg;
let fixture;

/* The replica's id from GLASSBOX_REPLICA_ID, not from its config. */
function startReplica(name, dataDir) {
  return env.startReplica(name, {
    tenants: { acme: { policy: POLICY } },
    admin: true,
    env: { GLASSBOX_REPLICA_ID: name },
    dataDir,
    replica: false,
  });
}

before(async () => {
  await env.start({ postgres: true, workPrefix: 'glassbox-store-replicas-' });
  ({ pg, fixture } = env);
});

after(() => env.stop());

test('an approval granted through replica 1 is spent on replica 2 exactly once', async () => {
  const r1 = await startReplica('replica-1');
  const r2 = await startReplica('replica-2');
  assert.match(r1.stderr(), /store postgresql, replica replica-1/, r1.stderr().slice(-2000));

  // the agent works on replica 2
  const agent = await r2.connect('acme');
  await ok(agent.client, 'browser_navigate', { url: fixture.url + '/gates/orders.html' });
  fixture.reset();
  const ref = await buttonRef(agent.client, 'Delete all orders');
  const asked = await callTool(agent.client, 'browser_click', { target: ref });
  const g = assertApprovalRequired(asked, 'clicking Delete all orders on replica 2');
  assert.equal(seen(fixture, DELETE), 0);

  // replica 1 serves its admin socket once a session of its own runs
  const other = await r1.connect('acme');
  await ok(other.client, 'browser_navigate', { url: fixture.url + '/gates/orders.html' });
  const socket = path.join(r1.dataDir, 'run', 'admin.sock');
  assert.ok(await pollUntil(() => fs.existsSync(socket), { deadlineMs: 30000 }), 'replica 1 has an admin socket');
  // the registry says which replica owns which session
  const owners = pg.query('SELECT session, replica FROM session_registry ORDER BY replica');
  assert.deepEqual(owners.map((x) => x[1]), ['replica-1', 'replica-2'], JSON.stringify(owners));
  const pending = await r1.admin('GET', '/approvals');
  assert.equal(pending.status, 200, pending.text);
  assert.ok(pending.json.approvals.some((a) => a.id === g.approval_id && a.state === 'pending'),
    `replica 1's admin listener lists replica 2's request: ${pending.text}`);
  const list = await approvals(r1.dataDir, ['list']);
  assert.equal(list.code, 0, list.stderr);
  assert.ok(list.stdout.includes(g.approval_id), `replica 1 lists replica 2's request: ${list.stdout}`);
  const out = await decide(r1.dataDir, 'approve', g.approval_id, ['--by', 'alice']);
  assert.ok(out.includes(g.approval_id), out);

  // spent on replica 2, once
  const r = await ok(agent.client, 'browser_click', { target: ref, approval: g.approval_id });
  assert.equal(sc(r).approval?.id, g.approval_id, textOf(r));
  assert.equal(sc(r).approval?.by, 'alice', textOf(r));
  assert.equal(seen(fixture, DELETE), 1, `exactly one delete: ${JSON.stringify(fixture.hits())}`);
  const again = await callTool(agent.client, 'browser_click', { target: ref, approval: g.approval_id });
  assertApprovalRefused(again, 'used', 'the second use on replica 2');
  assert.equal(seen(fixture, DELETE), 1, 'still exactly one delete');

  // the shared database holds it: used once, by replica 2's operation
  const [[state, usedBy]] = pg.query(`SELECT state, used_by_operation FROM approvals WHERE id = '${g.approval_id}'`);
  assert.equal(state, 'used');
  assert.equal(usedBy, sc(r).operation_id);
  const events = pg.query(`SELECT event FROM approval_events WHERE approval_id = '${g.approval_id}' ORDER BY seq`).map((x) => x[0]);
  assert.deepEqual(events, ['created', 'approved', 'used', 'refused']);
  const show = await approvals(r1.dataDir, ['show', g.approval_id]);
  assert.match(show.stdout, /state\s+used/, show.stdout);

  // a command where no replica runs reads the shared store directly
  const lone = newDataDir('glassbox-cli-');
  const direct = spawnSync(glassboxBin(), ['approvals', 'show', g.approval_id, '--data-dir', lone],
    { env: { ...process.env, GLASSBOX_STORE_POSTGRES: pg.url }, encoding: 'utf8', timeout: 30000 });
  assert.equal(direct.status, 0, direct.stderr);
  assert.match(direct.stdout, /state\s+used/, direct.stdout);
  assert.equal(fs.existsSync(path.join(lone, 'glassbox.db')), false);
  fs.rmSync(lone, { recursive: true, force: true });

  // no replica kept anything of it in a SQLite file of its own
  for (const svc of [r1, r2]) assert.equal(fs.existsSync(path.join(svc.dataDir, 'glassbox.db')), false, svc.dataDir);
  await other.client.close();
  await agent.client.close();
});

test('an operation acting when its replica is killed is unknown in the shared ledger', async () => {
  const r1 = replicas['replica-1'];
  const r2 = replicas['replica-2'];
  const agent = await r2.connect('acme');
  await ok(agent.client, 'browser_navigate', { url: fixture.url + '/gates/orders.html' });
  // acting for a minute, unless its replica dies first
  const pending = callTool(agent.client, 'browser_evaluate',
    { function: '() => new Promise((r) => setTimeout(r, 60000))', operation_id: 'op-killed-mid-call' }).catch((e) => e);
  const running = await pollUntil(() => {
    const rows = pg.query("SELECT state FROM operations WHERE tenant = 'acme' AND id = 'op-killed-mid-call'");
    return rows.length && rows[0][0] === 'running' ? rows : null;
  }, { deadlineMs: 60000, intervalMs: 200 });
  assert.ok(running, 'the call is running in the shared ledger');
  await r2.stop('SIGKILL');
  await pending;

  // a new session on replica 1 opens the store: the dead replica's claim is gone
  const c = await r1.connect('acme');
  const row = await pollUntil(() => {
    const rows = pg.query("SELECT state, note FROM operations WHERE tenant = 'acme' AND id = 'op-killed-mid-call'");
    return rows.length && rows[0][0] !== 'running' ? rows[0] : null;
  }, { deadlineMs: 30000, intervalMs: 200 });
  assert.ok(row, 'the operation was closed');
  assert.equal(row[0], 'unknown');
  assert.match(row[1], /whether it took effect is unknown/);
  await c.client.close();

  assert.ok(Number(pg.query("SELECT count(*) FROM session_registry WHERE replica = 'replica-2'")[0][0]) >= 1,
    'the killed run\'s sessions are still registered');

  // replica 2 restarted on its data dir ends the browsers of its last run
  // and takes its sessions off the registry
  const again = await startReplica('replica-2', r2.dataDir);
  assert.ok(await pollUntil(() => again.chromiums().length === 0 || null, { deadlineMs: 30000 }),
    `no browser of the killed run is left: ${again.chromiums()}`);
  assert.equal(pg.query("SELECT count(*) FROM session_registry WHERE replica = 'replica-2'")[0][0], '0');
  assert.match(again.stderr(), /ended with the last run of replica replica-2/, again.stderr().slice(-2000));
});
