/*
 * The web console on the admin listener of `glassbox serve`, driven by a
 * person's browser (headless Chromium through playwright-core) while an
 * agent (the official MCP SDK client) works in the same service:
 *   - log in, see the held action with its annotated screenshot, approve
 *     it; the agent's retry runs, and the decision is in the approval's
 *     tenant's chain with the credential's id and name;
 *   - deny with a reason; the retry is refused;
 *   - a POST without (or with a wrong) CSRF token is refused;
 *   - another tenant's approver and a viewer cannot see or decide;
 *   - take over: the agent's calls fail with human_control; the person
 *     clicks and types in the live view, hands back; the agent's next
 *     answer and the audit chain show what the person did.
 * A PNG of each page goes to $GLASSBOX_CONSOLE_SHOTS (default
 * /work/console-shots) for a person to look at.
 */
import { test, before, after } from 'node:test';
import fs from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { assert, callTool, ok, sc, dump, textOf, snapshot, findRef, navigate, evaluate, startFixtureServer, auditRecords, REPO_ROOT, pollUntil } from './lib.mjs';
import { startServe, consoleLogin } from '../integration/serve_helpers.mjs';

const SHOTS = process.env.GLASSBOX_CONSOLE_SHOTS || '/work/console-shots';
const POLICY = {
  ...JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'fixtures', 'policy', 'gates.json'), 'utf8')),
};
POLICY.risk = { ...POLICY.risk, approval_ttl_seconds: 600 };

let fixture, svc, browser, agent, agentB;

before(async () => {
  fs.mkdirSync(SHOTS, { recursive: true });
  fixture = await startFixtureServer();
  svc = await startServe({
    tenants: { acme: { policy: POLICY }, beta: { policy: POLICY } },
    // beta's agent makes its first call late: its session must not expire unused meanwhile
    limits: { unused_ttl_s: 3600, idle_ttl_s: 3600 },
    admin: true,
    console: {
      frames_per_second: 5,
      credentials: [
        { id: 'c-alice', name: 'alice', tenant: 'acme', role: 'approver' },
        { id: 'c-vic', name: 'vic', tenant: 'acme', role: 'viewer' },
        { id: 'c-bob', name: 'bob', tenant: 'beta', role: 'approver' },
      ],
    },
  });
  agent = await svc.connect('acme');
  agentB = await svc.connect('beta');
  browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
});

after(async () => {
  await browser?.close().catch(() => {});
  await svc?.stop();
  svc?.removeDataDir();
  await fixture?.close();
});

const ordersUrl = () => `http://shop.test:${fixture.port}/gates/orders.html`;

/* A person's browser logged in with the token of credential id ("admin": the admin token). */
async function person(id) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const errors = [];
  page.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  await page.goto(`${svc.adminUrl}/console`);
  assert.match(page.url(), /\/console\/login$/, 'not logged in: the console sends the person to the login page');
  await page.fill('#token', id === 'admin' ? svc.adminToken : svc.consoleTokens[id]);
  await Promise.all([page.waitForURL(/\/console\/sessions$/), page.click('button[type=submit]')]);
  const cookies = await context.cookies();
  const c = cookies.find((k) => k.name === 'gb_console');
  assert.ok(c, `the login sets the console cookie: ${JSON.stringify(cookies)}`);
  assert.equal(c.httpOnly, true);
  assert.equal(c.sameSite, 'Strict');
  return { context, page, errors };
}

async function shot(page, name, { fullPage = true } = {}) {
  await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage });
}

/* The agent clicks "Delete all orders": held for approval; returns {gate, ref}. */
async function heldClick(client) {
  await navigate(client, ordersUrl());
  const ref = findRef(await snapshot(client), 'button', 'Delete all orders');
  const r = await callTool(client, 'browser_click', { target: ref });
  assert.equal(sc(r).error?.code, 'approval_required', dump(r));
  return { gate: sc(r).gate, ref };
}

/* POSTs a form from inside the console page (same origin, with its cookie). */
function postFromPage(page, url, fields) {
  return page.evaluate(async ({ url, fields }) => {
    const r = await fetch(url, { method: 'POST', body: new URLSearchParams(fields), redirect: 'manual' });
    return { status: r.type === 'opaqueredirect' ? 303 : r.status, text: await r.text() };
  }, { url, fields });
}

test('the login page refuses a wrong token and says what to do', async () => {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(`${svc.adminUrl}/console/login`);
  await shot(page, 'login');
  await page.fill('#token', 'not-a-token');
  const [resp] = await Promise.all([page.waitForResponse((r) => r.url().endsWith('/console/login') && r.request().method() === 'POST'), page.click('button[type=submit]')]);
  assert.equal(resp.status(), 401);
  assert.match(await page.textContent('.error'), /not the admin token or a console credential/);
  const csp = resp.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self'/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  await context.close();
});

test('a held action is approved in the console with its evidence in front of the person; the retry runs', async () => {
  const { gate, ref } = await heldClick(agent.client);
  const alice = await person('c-alice');
  // the sessions page lists the agent's session with its tenant, client and URL
  const row = alice.page.locator(`tr[data-session="${agent.sessionId}"]`);
  await row.waitFor();
  const cells = await row.locator('td').allTextContents();
  assert.equal(cells[1], 'acme');
  assert.match(cells[2], /serve-test-acme/);
  await pollUntil(async () => {
    await alice.page.reload();
    return /gates\/orders\.html/.test(await row.locator('td').nth(3).textContent());
  }, { deadlineMs: 20000 });
  assert.equal(await alice.page.locator(`tr[data-session="${agentB.sessionId}"]`).count(), 0, 'beta\'s session is not shown to acme\'s approver');
  await shot(alice.page, 'sessions');

  await alice.page.goto(`${svc.adminUrl}/console/approvals`);
  const card = alice.page.locator(`.approval[data-approval="${gate.approval_id}"]`);
  await card.waitFor();
  assert.ok((await card.textContent()).includes(gate.fingerprint), 'the fingerprint is shown');
  assert.ok((await card.textContent()).includes(gate.summary), 'the summary is shown');
  assert.ok((await card.textContent()).includes(gate.expires_at), 'the expiry is shown');
  const img = card.locator('img.evidence');
  await img.waitFor();
  const width = await img.evaluate((el) => el.complete ? el.naturalWidth : new Promise((res) => { el.onload = () => res(el.naturalWidth); el.onerror = () => res(0); }));
  assert.ok(width > 100, `the annotated screenshot of the element loads (${width} px wide)`);
  await shot(alice.page, 'approvals');
  assert.deepEqual(alice.errors, [], 'no script or CSP errors on the pages');

  await card.locator('input[name=reason]').first().fill('the shop is being reset');
  await Promise.all([alice.page.waitForURL(/decided=/), card.locator('button.approve').click()]);
  assert.match(await alice.page.textContent('#decided'), /is approved \(by alice\)/);

  const before = fixture.hits().requests['POST /orders/delete'] ?? 0;
  const r = await ok(agent.client, 'browser_click', { target: ref, approval: gate.approval_id });
  assert.equal(sc(r).approval?.by, 'alice', dump(r));
  assert.equal(fixture.hits().requests['POST /orders/delete'], before + 1, 'the approved click reached the site once');

  const recs = auditRecords(svc.dataDir, 'acme');
  const granted = recs.find((x) => x.kind === 'approval_granted' && x.body.approval_id === gate.approval_id);
  assert.ok(granted, 'the decision is in acme\'s chain');
  assert.equal(granted.body.by, 'alice');
  assert.equal(granted.body.credential, 'c-alice');
  assert.equal(granted.body.channel, 'web-console');
  assert.equal(granted.body.reason, 'the shop is being reset');
  assert.equal(granted.actor.token, 'c-alice');
  assert.equal(granted.actor.user, 'alice');
  const asked = recs.find((x) => x.kind === 'approval_requested' && x.body.approval_id === gate.approval_id);
  assert.ok(asked?.artifacts?.some((a) => a.kind === 'annotated_screenshot'), 'the approval\'s picture is evidence in the chain');
  const betaRecs = fs.existsSync(path.join(svc.dataDir, 'tenants', 'beta', 'audit')) ? auditRecords(svc.dataDir, 'beta') : [];
  assert.equal(betaRecs.filter((x) => x.body?.approval_id === gate.approval_id).length, 0, 'nothing of it lands in another tenant\'s trail');
  await alice.context.close();
});

test('denied in the console with a reason: the retry is refused', async () => {
  const { gate, ref } = await heldClick(agent.client);
  const alice = await person('c-alice');
  await alice.page.goto(`${svc.adminUrl}/console/approvals`);
  const card = alice.page.locator(`.approval[data-approval="${gate.approval_id}"]`);
  await card.locator('form:has(button.deny) input[name=reason]').fill('not today');
  await Promise.all([alice.page.waitForURL(/decided=/), card.locator('button.deny').click()]);
  assert.match(await alice.page.textContent('#decided'), /is denied \(by alice\)/);
  const r = await callTool(agent.client, 'browser_click', { target: ref, approval: gate.approval_id });
  assert.equal(sc(r).error?.code, 'approval_refused', dump(r));
  assert.equal(sc(r).gate?.reason, 'denied', dump(r));
  const denied = auditRecords(svc.dataDir, 'acme').find((x) => x.kind === 'approval_denied' && x.body.approval_id === gate.approval_id);
  assert.equal(denied?.body.reason, 'not today');
  assert.equal(denied?.actor.token, 'c-alice');
  await alice.context.close();
});

test('a state change without the CSRF token, or with a wrong one, is refused and changes nothing', async () => {
  const { gate } = await heldClick(agent.client);
  const alice = await person('c-alice');
  // a page that does not reload itself, to post from
  await alice.page.goto(`${svc.adminUrl}/console/trail`);
  const url = `${svc.adminUrl}/console/approvals/${gate.approval_id}/approve`;
  const none = await postFromPage(alice.page, url, { reason: 'x' });
  assert.equal(none.status, 403, none.text);
  assert.match(none.text, /CSRF token is missing or wrong/);
  const wrong = await postFromPage(alice.page, url, { csrf: 'f'.repeat(64) });
  assert.equal(wrong.status, 403, wrong.text);
  const take = await postFromPage(alice.page, `${svc.adminUrl}/console/sessions/${agent.sessionId}/take`, {});
  assert.equal(take.status, 403, take.text);
  const pending = (await svc.admin('GET', '/approvals')).json.approvals.find((a) => a.id === gate.approval_id);
  assert.equal(pending?.state, 'pending', 'still pending');
  // the same with the page's own token works
  const csrf = await alice.page.getAttribute('body', 'data-csrf');
  const good = await postFromPage(alice.page, url, { csrf });
  assert.equal(good.status, 303, good.text);
  await alice.context.close();
});

test('another tenant\'s approver and a viewer cannot see or decide', async () => {
  const { gate } = await heldClick(agent.client);
  const bob = await person('c-bob');
  await bob.page.goto(`${svc.adminUrl}/console/approvals`);
  assert.equal(await bob.page.locator(`.approval[data-approval="${gate.approval_id}"]`).count(), 0, 'acme\'s approval is not listed for beta');
  await bob.page.goto(`${svc.adminUrl}/console/trail`);
  const csrf = await bob.page.getAttribute('body', 'data-csrf');
  const tryIt = await postFromPage(bob.page, `${svc.adminUrl}/console/approvals/${gate.approval_id}/approve`, { csrf });
  assert.equal(tryIt.status, 404, tryIt.text);
  const live = await bob.page.goto(`${svc.adminUrl}/console/sessions/${agent.sessionId}`);
  assert.equal(live.status(), 404);
  const take = await postFromPage(bob.page, `${svc.adminUrl}/console/sessions/${agent.sessionId}/take`, { csrf });
  assert.equal(take.status, 404, take.text);
  const trail = await bob.page.goto(`${svc.adminUrl}/console/trail?tenant=acme`);
  assert.equal(trail.status(), 200);
  assert.ok(!(await bob.page.content()).includes(gate.approval_id), 'beta\'s trail page shows nothing of acme');
  await bob.context.close();

  const vic = await person('c-vic');
  await vic.page.goto(`${svc.adminUrl}/console/approvals`);
  const card = vic.page.locator(`.approval[data-approval="${gate.approval_id}"]`);
  await card.waitFor();
  assert.equal(await card.locator('form').count(), 0, 'a viewer gets no Approve / Deny');
  await vic.page.goto(`${svc.adminUrl}/console/trail`);
  const vcsrf = await vic.page.getAttribute('body', 'data-csrf');
  const v = await postFromPage(vic.page, `${svc.adminUrl}/console/approvals/${gate.approval_id}/approve`, { csrf: vcsrf });
  assert.equal(v.status, 403, v.text);
  await vic.context.close();
  const still = (await svc.admin('GET', '/approvals')).json.approvals.find((a) => a.id === gate.approval_id);
  assert.equal(still?.state, 'pending');
});

test('take over: the agent is told a person has the browser; the person types; hand back; the agent\'s answer and the chain show it', async () => {
  await navigate(agent.client, ordersUrl());
  const box = await evaluate(agent.client, `() => { const r = (s) => { const b = document.querySelector(s).getBoundingClientRect(); return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; }; return { note: r('#note'), save: r('#save') }; }`);
  const saves = fixture.hits().requests['POST /api/save'] ?? 0;
  const alice = await person('c-alice');
  await alice.page.goto(`${svc.adminUrl}/console/sessions/${agent.sessionId}`);
  // frames arrive
  await alice.page.waitForFunction(() => Number(document.getElementById('frame').dataset.seq || 0) > 0, null, { timeout: 60000 });
  await alice.page.click('#take');
  await alice.page.waitForFunction(() => document.body.dataset.control === 'human' && document.body.dataset.mine === '1', null, { timeout: 30000 });

  const refused = await callTool(agent.client, 'browser_snapshot', {});
  assert.equal(refused.isError, true, dump(refused));
  assert.equal(sc(refused).error?.code, 'human_control', dump(refused));
  assert.match(sc(refused).error.message, /a person \(alice\) has the browser.*retry later/, dump(refused));

  // click into the note field in the picture, type, click Save
  const frame = alice.page.locator('#frame');
  const fb = await frame.boundingBox();
  const css = await alice.page.evaluate(async () => {
    const r = await fetch(`${document.getElementById('live').dataset.base}/status`);
    return (await r.json()).live;
  });
  assert.ok(css.css_width > 0, JSON.stringify(css));
  const at = (p) => ({ x: (p.x / css.css_width) * fb.width, y: (p.y / css.css_height) * fb.height });
  await frame.click({ position: at(box.note) });
  await alice.page.fill('#type-text', 'typed by a person');
  await alice.page.click('#type-form button[type=submit]');
  await alice.page.waitForFunction(() => document.getElementById('type-text').value === '', null, { timeout: 30000 });
  await frame.click({ position: at(box.save) });
  await pollUntil(() => (fixture.hits().requests['POST /api/save'] ?? 0) > saves, { deadlineMs: 30000 });
  // the live view shows the person's actions
  await alice.page.waitForFunction(() => [...document.querySelectorAll('#actions li')].filter((li) => /human_input \(a person: alice\)/.test(li.textContent)).length >= 3, null, { timeout: 30000 });
  const seqNow = Number(await frame.getAttribute('data-seq'));
  await alice.page.waitForFunction((n) => Number(document.getElementById('frame').dataset.seq) > n, seqNow, { timeout: 30000 }).catch(() => {});
  await shot(alice.page, 'live');
  await alice.page.click('#release');
  await alice.page.waitForFunction(() => document.body.dataset.control === 'agent', null, { timeout: 30000 });

  const r = await ok(agent.client, 'browser_evaluate', { function: `() => document.getElementById('note').value` });
  assert.equal(sc(r).result, 'typed by a person', dump(r));
  const h = sc(r).human_control;
  assert.ok(h, `the answer says a person acted: ${dump(r)}`);
  assert.equal(h.by, 'alice');
  assert.equal(h.credential, 'c-alice');
  assert.ok(h.events >= 3, dump(r));
  assert.equal(h.dom_changed, true, dump(r));
  assert.ok(h.requests.some((q) => q.method === 'POST' && q.url.endsWith('/api/save')), dump(r));
  assert.match(h.evidence[0]?.uri || '', /^glassbox:\/\/artifact\/[0-9a-f]{64}$/, dump(r));
  assert.match(textOf(r), /a person \(alice\) had the browser/, dump(r));
  const link = r.content.find((c) => c.type === 'resource_link' && c.name === 'the page when the person handed it back');
  assert.equal(link?.uri, h.evidence[0].uri, dump(r));
  const shotRes = await agent.client.readResource({ uri: link.uri });
  assert.equal(shotRes.contents[0].mimeType, 'image/png', 'the agent can read the evidence');
  // only the first answer after the hand-back carries it
  const next = await ok(agent.client, 'browser_evaluate', { function: `() => 1` });
  assert.equal(sc(next).human_control, undefined);

  const recs = auditRecords(svc.dataDir, 'acme');
  const inputs = recs.filter((x) => x.kind === 'human_input' && x.session === recs.find((y) => y.kind === 'human_control_began')?.session);
  assert.ok(inputs.length >= 3, `each input event is a record: ${inputs.length}`);
  for (const x of inputs) {
    assert.equal(x.body.actor, 'human');
    assert.equal(x.actor.user, 'alice');
    assert.equal(x.actor.token, 'c-alice');
    assert.equal(x.body.ok, true, JSON.stringify(x.body));
  }
  assert.ok(inputs.some((x) => x.body.type === 'type' && x.body.text === 'typed by a person'));
  const ended = recs.find((x) => x.kind === 'human_control_ended');
  assert.ok(ended?.artifacts?.length, 'the hand-back keeps a screenshot as evidence');
  await alice.context.close();
});

/* A person takes the session over on page, types secret into its password
 * field and hands back: the audit log has the input as its length only. */
async function personTypesPassword(page, secret) {
  await navigate(agent.client, `http://shop.test:${fixture.port}${page}`);
  const p = await evaluate(agent.client, `() => { const b = document.getElementById('password').getBoundingClientRect(); return { x: b.x + b.width / 2, y: b.y + b.height / 2 }; }`);
  const alice = await person('c-alice');
  await alice.page.goto(`${svc.adminUrl}/console/sessions/${agent.sessionId}`);
  await alice.page.waitForFunction(() => Number(document.getElementById('frame').dataset.seq || 0) > 0, null, { timeout: 60000 });
  await alice.page.click('#take');
  await alice.page.waitForFunction(() => document.body.dataset.mine === '1', null, { timeout: 30000 });
  const css = await alice.page.evaluate(async () => (await (await fetch(`${document.getElementById('live').dataset.base}/status`)).json()).live);
  const fb = await alice.page.locator('#frame').boundingBox();
  await alice.page.locator('#frame').click({ position: { x: (p.x / css.css_width) * fb.width, y: (p.y / css.css_height) * fb.height } });
  await alice.page.fill('#type-text', secret);
  await alice.page.click('#type-form button[type=submit]');
  await alice.page.waitForFunction(() => document.getElementById('type-text').value === '', null, { timeout: 30000 });
  await alice.page.click('#release');
  await alice.page.waitForFunction(() => document.body.dataset.control === 'agent', null, { timeout: 30000 });
  const r = await ok(agent.client, 'browser_evaluate', { function: `() => document.getElementById('password').value.length` });
  assert.equal(sc(r).result, secret.length, 'the person\'s typing reached the field');
  assert.ok(!JSON.stringify(r).includes(secret), 'not in the agent\'s answer');
  const typed = auditRecords(svc.dataDir, 'acme').filter((x) => x.kind === 'human_input' && x.body.type === 'type').pop();
  assert.equal(typed.body.text_redacted, true, JSON.stringify(typed.body));
  assert.equal(typed.body.length, secret.length);
  assert.equal(typed.body.text, undefined);
  const { filesContaining } = await import('./lib.mjs');
  assert.deepEqual(filesContaining(path.join(svc.dataDir, 'tenants'), secret), [], 'nowhere in the trail or the evidence');
  assert.ok(!svc.stderr().includes(secret), 'not in the service log');
  await alice.context.close();
}

test('a password a person types in the live view is recorded as its length only, nowhere in clear', async () => {
  await personTypesPassword('/secrets/login.html', 'hunter2-from-a-person');
});

test('a page that says its password field is a text field cannot have the password recorded in clear', async () => {
  await personTypesPassword('/secrets/login-lying.html', 'hunter3-from-a-person');
});

test('the trail page finds records by tenant, session, tool and verdict', async () => {
  const alice = await person('c-alice');
  await alice.page.goto(`${svc.adminUrl}/console/trail?tool=browser_click&verdict=approval_required`);
  const rows = alice.page.locator('#trail tr');
  assert.ok((await rows.count()) > 1, 'held clicks are found');
  for (const t of await rows.allTextContents())
    if (!t.startsWith('#')) assert.match(t, /browser_click.*approval_required/);
  await alice.page.goto(`${svc.adminUrl}/console/trail?verdict=human_input`);
  assert.ok((await alice.page.locator('#trail tr').count()) > 3);
  await alice.page.goto(`${svc.adminUrl}/console/trail?verify=1`);
  assert.match(await alice.page.textContent('#verified'), /acme: chain verified: \d+ records/);
  await shot(alice.page, 'trail', { fullPage: false });
  await alice.context.close();
});

/* Logs in over plain HTTP; returns the cookie header value and the page's CSRF token. */
const rawLogin = (id) => consoleLogin(svc, id);

test('hostile requests to the console get precise refusals and the service keeps serving', async () => {
  const u = svc.adminUrl;
  const form = (body, headers = {}) => ({ method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body, redirect: 'manual' });
  let r = await fetch(`${u}/console/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"token":"x"}' });
  assert.equal(r.status, 415);
  assert.match((await r.json()).error, /x-www-form-urlencoded/);
  r = await fetch(`${u}/console/login`, form(`token=${'a'.repeat(2000)}`));
  assert.equal(r.status, 400);
  r = await fetch(`${u}/console/login`, form(`token=${'a'.repeat(200000)}`));
  assert.equal(r.status, 413);
  r = await fetch(`${u}/console/sessions/${agent.sessionId}/frame`);
  assert.equal(r.status, 401);
  r = await fetch(`${u}/console/sessions`, { headers: { cookie: `gb_console=${'0'.repeat(64)}` }, redirect: 'manual' });
  assert.equal(r.status, 303, 'a forged cookie is sent to the login page');
  assert.match(r.headers.get('location'), /\/console\/login$/);
  r = await fetch(`${u}/console/sessions`, { method: 'PUT' });
  assert.equal(r.status, 405);
  r = await fetch(`${u}/console/login`, form(`token=${svc.adminToken}`, { origin: 'https://evil.example' }));
  assert.equal(r.status, 403, 'another site\'s form cannot post, not even the login');
  assert.equal(r.headers.get('set-cookie'), null);

  const { cookie, csrf } = await rawLogin('c-alice');
  for (const p of ['/console/artifacts/acme/..%2F..%2Fkeys%2Faudit.key', '/console/artifacts/beta/' + 'a'.repeat(64), '/console/sessions/..%2F..', '/console/nothing'])
    assert.equal((await fetch(u + p, { headers: { cookie } })).status, 404, p);
  r = await fetch(`${u}/console/sessions/${agent.sessionId}/input`, form(new URLSearchParams({ csrf, kind: 'click', x: 'NaN', y: '1' }).toString(), { cookie }));
  assert.equal(r.status, 400);
  assert.match((await r.json()).error, /x and y/);
  r = await fetch(`${u}/console/sessions/${agent.sessionId}/input`, form(new URLSearchParams({ csrf, kind: 'type', text: 'x' }).toString(), { cookie }));
  assert.equal(r.status, 409, 'input without taking over is refused');
  assert.match((await r.json()).error, /take the browser over first/);
  // a viewer's frame rate is bounded: requests faster than frames_per_second get 429
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await fetch(`${u}/console/sessions/${agent.sessionId}/frame`, { headers: { cookie } })).status);
  assert.ok(statuses.includes(429), `back-to-back frame requests are limited: ${statuses}`);

  assert.equal((await fetch(`${u}/healthz`)).status, 200);
  await ok(agent.client, 'browser_evaluate', { function: '() => 2' });
});

test('a decision over the admin socket lands in the approval\'s own tenant\'s trail', async () => {
  // the admin socket is served by the first session's store (acme's): a
  // decision on beta's approval must still be recorded in beta's trail
  const { gate } = await heldClick(agentB.client);
  const { execFile } = await import('node:child_process');
  const { glassboxBin } = await import('./lib.mjs');
  const out = await new Promise((res) => execFile(glassboxBin(), ['approvals', 'approve', gate.approval_id, '--by', 'carol', '--data-dir', svc.dataDir], { encoding: 'utf8', timeout: 30000 }, (err, stdout, stderr) => res({ code: err ? err.code : 0, stdout, stderr })));
  assert.equal(out.code, 0, out.stdout + out.stderr);
  const inBeta = await pollUntil(() => auditRecords(svc.dataDir, 'beta').find((x) => x.kind === 'approval_granted' && x.body.approval_id === gate.approval_id), { deadlineMs: 20000 });
  assert.ok(inBeta, 'recorded in beta\'s trail');
  assert.equal(inBeta.body.by, 'carol');
  assert.equal(auditRecords(svc.dataDir, 'acme').filter((x) => x.body?.approval_id === gate.approval_id).length, 0, 'and not in acme\'s');
});
