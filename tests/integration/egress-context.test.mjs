/*
 * Egress drills in isolation "context" (the session is a browser context
 * of its tenant's shared Chromium, docs/isolation.md), with the context's
 * own egress proxy alone (tool and Fetch layers off) and with every layer:
 * every channel a page has to a denied host is refused and the denied
 * server sees nothing, while the allowed twin of each request still
 * loads. The drills are in egress-drills.mjs; two sessions of one shared
 * browser are drilled in isolation_context.test.mjs.
 */
import { describe, test } from 'node:test';
import { assert, auditRecords, pollUntil } from '../e2e/lib.mjs';
import { defineDrills, useDrill, LAYER_SETS } from './egress-drills.mjs';

/* Every browser the drills' session opened was a context of a shared
 * one, as its audit trail says. */
function assertShared(run) {
  test('the drilled session ran in a context of a shared browser', async () => {
    const opened = await pollUntil(() => {
      const r = auditRecords(run.gb.dataDir).filter((x) => x.kind === 'session_opened');
      return r.length ? r : null;
    });
    assert.ok(opened, 'no session_opened record');
    for (const r of opened) assert.equal(r.body.browser, 'shared', JSON.stringify(r.body).slice(0, 300));
  });
}

describe('the context\'s proxy alone', () => {
  const run = useDrill({ layers: LAYER_SETS.proxy, isolation: 'context' });
  defineDrills(run);
  assertShared(run);
});

describe('every layer', () => {
  const run = useDrill({ layers: LAYER_SETS.all, isolation: 'context' });
  defineDrills(run);
  assertShared(run);
});
