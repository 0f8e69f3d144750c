/*
 * browser_fill_form: several fields in one call (textbox, checkbox,
 * radio, combobox, slider), each with its own verdict re-read from the
 * page; a field that does not take its value fails the call naming it.
 * Gate: a payment field held by the shipped risk rules stops the whole
 * call before any field is touched. Egress: a form that submits itself to
 * a denied host reaches it zero times.
 */
import { test, before, after } from 'node:test';
import { assert, callTool, ok, sc, dump, evaluate, snapshot, findRef, assertToolError, startFixtureServer, textOf, filesContaining, auditText, pollUntil } from '../e2e/lib.mjs';
import { useGlassboxWith, seen } from './interact_helpers.mjs';
import { decide } from './gates_helpers.mjs';

/* the shipped risk rules on (payment-field), as in fixtures/policy/gates.json */
const h = useGlassboxWith('gates');
let denied = null;
before(async () => {
  denied = await startFixtureServer();
});
after(async () => {
  if (denied) await denied.close();
});

const field = (s, name) => (sc(s).fields || []).find((f) => f.name === name);

test('seven fields of five types in one call, each re-read', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/fill-form.html') });
  const snap = await snapshot(h.client);
  const r = await ok(h.client, 'browser_fill_form', {
    fields: [
      { name: 'Full name', type: 'textbox', target: findRef(snap, 'textbox', 'Full name'), value: 'Ada Lovelace' },
      { name: 'Email', type: 'textbox', ref: findRef(snap, 'textbox', 'Email'), value: 'ada@example.test' },
      { name: 'Send me news', type: 'checkbox', target: '#news', value: 'false' },
      { name: 'I accept the terms', type: 'checkbox', target: findRef(snap, 'checkbox', 'I accept the terms'), value: 'true' },
      { name: 'Pro', type: 'radio', target: '#plan-pro', value: 'true' },
      { name: 'Country', type: 'combobox', target: '#country', value: 'Germany' },
      { name: 'Volume', type: 'slider', target: '#volume', value: '7' },
    ],
  });
  const got = await evaluate(h.client, `() => ({
    name: document.getElementById('name').value, email: document.getElementById('email').value,
    news: document.getElementById('news').checked, terms: document.getElementById('terms').checked,
    pro: document.getElementById('plan-pro').checked, basic: document.getElementById('plan-basic').checked,
    country: document.getElementById('country').value, volume: document.getElementById('volume').value,
    changes: document.getElementById('changes').textContent })`);
  assert.deepEqual(
    { ...got, changes: undefined },
    { name: 'Ada Lovelace', email: 'ada@example.test', news: false, terms: true, pro: true, basic: false, country: 'de', volume: '7', changes: undefined },
  );
  for (const id of ['news', 'terms', 'plan-pro', 'country', 'volume'])
    assert.ok(got.changes.includes(id), `the page saw a change event on ${id}: ${got.changes}`);
  const fields = sc(r).fields;
  assert.equal(fields.length, 7, dump(r));
  for (const f of fields) assert.equal(f.ok, true, `${f.name}: ${dump(r)}`);
  assert.equal(field(r, 'Full name').observed, 'Ada Lovelace');
  assert.equal(field(r, 'Send me news').observed, 'false');
  assert.equal(field(r, 'Country').observed, 'Germany');
  assert.equal(field(r, 'Volume').observed, '7');
});

test('a field the page puts back fails the call naming it; the fields before it are kept', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/fill-form.html') });
  const r = await callTool(h.client, 'browser_fill_form', {
    fields: [
      { name: 'Full name', type: 'textbox', target: '#name', value: 'Grace' },
      { name: 'Postcode', type: 'textbox', target: '#zip', value: 'AB12' },
      { name: 'Code', type: 'textbox', target: '#code', value: '123' },
    ],
  });
  const text = assertToolError(r, 'a field the page refuses');
  assert.equal(sc(r).error?.code, 'value_not_set', dump(r));
  assert.match(text, /Postcode/, text);
  assert.equal(field(r, 'Full name').ok, true, dump(r));
  assert.equal(field(r, 'Postcode').ok, false, dump(r));
  assert.equal(field(r, 'Postcode').expected, 'AB12', dump(r));
  assert.equal(field(r, 'Postcode').observed, '', dump(r));
  assert.equal(field(r, 'Code').status, 'not_attempted', dump(r));
  assert.equal(await evaluate(h.client, "() => document.getElementById('name').value"), 'Grace');
  assert.equal(await evaluate(h.client, "() => document.getElementById('code').value"), '');
});

test('maxlength, a missing option, a value a checkbox cannot take: each named', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/fill-form.html') });
  const cut = await callTool(h.client, 'browser_fill_form', {
    fields: [{ name: 'Code', type: 'textbox', target: '#code', value: '12345' }],
  });
  assert.match(assertToolError(cut), /Code/);
  assert.equal(field(cut, 'Code').observed, '123', dump(cut));

  const option = await callTool(h.client, 'browser_fill_form', {
    fields: [{ name: 'Country', type: 'combobox', target: '#country', value: 'Atlantis' }],
  });
  const otext = assertToolError(option);
  assert.equal(sc(option).error?.code, 'no_such_option', dump(option));
  assert.match(otext, /Country/);
  assert.match(otext, /"fr"/, 'the options are listed');

  const yes = await callTool(h.client, 'browser_fill_form', {
    fields: [{ name: 'Send me news', type: 'checkbox', target: '#news', value: 'yes' }],
  });
  assert.match(assertToolError(yes), /"true" or "false"/);
  assert.equal(await evaluate(h.client, "() => document.getElementById('news').checked"), true, 'unchanged');

  const wrongType = await callTool(h.client, 'browser_fill_form', {
    fields: [{ name: 'Full name', type: 'checkbox', target: '#name', value: 'true' }],
  });
  assert.match(assertToolError(wrongType), /Full name/);
});

test('a password field: the value is set and re-read, and never appears in the result, the audit log or any file', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/fill-form.html') });
  const secret = 'Hunter2-' + Math.random().toString(36).slice(2);
  const r = await ok(h.client, 'browser_fill_form', {
    fields: [
      { name: 'Full name', type: 'textbox', target: '#name', value: 'Ada' },
      { name: 'Password', type: 'textbox', target: '#pw', value: secret },
    ],
  });
  assert.equal(await evaluate(h.client, "() => document.getElementById('pw').value.length"), secret.length);
  assert.equal(field(r, 'Password').ok, true, dump(r));
  assert.equal(field(r, 'Password').observed, '[redacted]', dump(r));
  assert.equal(field(r, 'Full name').observed, 'Ada', 'other fields are shown');
  assert.ok(!JSON.stringify(r).includes(secret), `the result holds the password: ${dump(r)}`);
  assert.ok(!textOf(r).includes(secret));
  const audit = await pollUntil(() => { const t = auditText(h.gb.dataDir, 'local'); return t.includes(sc(r).operation_id) && t; });
  assert.ok(!audit.includes(secret), 'the audit log holds the password');
  assert.deepEqual(filesContaining(h.gb.dataDir, secret), [], 'a file under the data dir holds the password');
});

test('a field the page re-rendered after the check is not filled blindly: target_changed names it', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/fill-form-rerender.html') });
  const r = await callTool(h.client, 'browser_fill_form', {
    fields: [
      { name: 'Country', type: 'textbox', target: '#country', value: 'France' },
      { name: 'Street', type: 'textbox', target: '#street', value: '1 rue de Rivoli' },
    ],
  });
  const text = assertToolError(r, 'a re-rendered field');
  assert.equal(sc(r).error?.code, 'target_changed', dump(r));
  assert.match(text, /Street/);
  assert.equal(field(r, 'Country').ok, true, dump(r));
  assert.equal(await evaluate(h.client, "() => document.getElementById('street').value"), '');
});

test('bad arguments are precise errors', async () => {
  for (const [args, re] of [
    [{}, /fields/],
    [{ fields: [] }, /at least 1 item/],
    [{ fields: [{ name: 'x', type: 'dial', target: '#name', value: '1' }] }, /textbox, checkbox, radio, combobox, slider/],
    [{ fields: [{ name: 'x', type: 'textbox', value: '1' }] }, /target/],
    [{ fields: [{ name: 'x', type: 'textbox', target: '#name', ref: '#name', value: '1' }] }, /one of/],
    [{ fields: [{ name: 'x', type: 'textbox', target: '#name' }] }, /value/],
    [{ fields: ['#name'] }, /fields\[0\]/],
  ]) {
    const r = await callTool(h.client, 'browser_fill_form', args);
    assert.equal(r.isError, true, `${JSON.stringify(args)}: ${dump(r)}`);
    assert.match(assertToolError(r), re, JSON.stringify(args));
  }
});

test('a card number field needs approval: no field of the call is touched', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/fill-form-payment.html') });
  const r = await callTool(h.client, 'browser_fill_form', {
    fields: [
      { name: 'Name on the order', type: 'textbox', target: '#holder', value: 'Ada' },
      { name: 'Card number', type: 'textbox', target: '#card', value: '4111111111111111' },
    ],
  });
  const text = assertToolError(r, 'typing a card number');
  assert.equal(sc(r).error?.code, 'approval_required', dump(r));
  assert.match(text, /Card number/, text);
  assert.ok(!JSON.stringify(r).includes('4111111111111111'), 'the card number is not echoed');
  assert.equal(await evaluate(h.client, "() => document.getElementById('holder').value"), '', 'nothing was filled');
  assert.equal(await evaluate(h.client, "() => document.getElementById('card').value"), '');
});

test('approved by a person, the repeat with the approval fills every field, the card number too', async () => {
  await ok(h.client, 'browser_navigate', { url: h.url('/interact/fill-form-payment.html') });
  const fields = [
    { name: 'Name on the order', type: 'textbox', target: '#holder', value: 'Ada' },
    { name: 'Card number', type: 'textbox', target: '#card', value: '4111111111111111' },
  ];
  const asked = await callTool(h.client, 'browser_fill_form', { fields });
  assert.equal(sc(asked).error?.code, 'approval_required', dump(asked));
  const id = sc(asked).gate?.approval_id;
  assert.ok(id, dump(asked));
  await decide(h.gb.dataDir, 'approve', id);
  const r = await ok(h.client, 'browser_fill_form', { fields, approval: id });
  assert.equal(sc(r).approval?.id, id, dump(r));
  assert.equal(await evaluate(h.client, "() => document.getElementById('card').value"), '4111111111111111');
  assert.equal(await evaluate(h.client, "() => document.getElementById('holder').value"), 'Ada');
  const again = await callTool(h.client, 'browser_fill_form', { fields, approval: id });
  assert.equal(again.isError, true, `a spent approval is not used twice: ${dump(again)}`);
});

test('egress drill: a form that submits itself to a denied host reaches it zero times', async () => {
  denied.reset();
  const to = `http://evil.test:${denied.port}/search`;
  await ok(h.client, 'browser_navigate', { url: h.url(`/interact/fill-form-submit.html?to=${encodeURIComponent(to)}`) });
  const r = await callTool(h.client, 'browser_fill_form', {
    fields: [
      { name: 'Query', type: 'textbox', target: '#q', value: 'invoices' },
      { name: 'Search now', type: 'checkbox', target: '#now', value: 'true' },
    ],
  });
  assert.deepEqual(denied.hits().paths, {}, `the denied host saw nothing: ${JSON.stringify(denied.hits())}`);
  const blocked = JSON.stringify(sc(r).blocked || sc(r).failed_requests || []);
  assert.ok(blocked.includes('evil.test'), `the refusal is reported: ${dump(r)}`);
  assert.equal(seen(denied, 'GET /search'), 0);
});
