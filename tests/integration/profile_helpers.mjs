/*
 * profile_helpers.mjs - the fixture site's profile pages as the profile
 * tests use them (profiles, replicas_profiles, serve): signing in, which
 * leaves a login cookie and a localStorage note in the browser's profile,
 * and reading back who the account page says is signed in.
 */
import { assert, ok, sc, dump, evaluate } from '../e2e/lib.mjs';

/* Signs in as user (any name; the password the fixture wants) on the
 * fixture site at site (its base URL); asserts the account page came. */
export async function signIn(client, site, user = 'alice') {
  await ok(client, 'browser_navigate', { url: site + '/profile/login.html' });
  await ok(client, 'browser_type', { target: 'input[name=user]', text: user });
  await ok(client, 'browser_type', { target: 'input[name=password]', text: 'correct horse' });
  const r = await ok(client, 'browser_click', { target: 'button[type=submit]' });
  assert.equal(sc(r).title, 'Account', dump(r));
}

/* The account page of the fixture site at site as the browser sees it:
 * {title, text} ("Signed in as NAME" when a login cookie is there). */
export async function account(client, site) {
  const r = await ok(client, 'browser_navigate', { url: site + '/profile/account' });
  const text = await evaluate(client, '() => document.body.innerText');
  return { title: sc(r).title, text };
}
