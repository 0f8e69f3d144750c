/*
 * glassbox.fixture.mjs - Playwright Test fixtures that run a suite on a
 * glassbox session's CDP endpoint (docs/cdp.md) instead of a browser
 * Playwright launches: `browser` is connectOverCDP to
 * GLASSBOX_CDP_ENDPOINT (the session's wsEndpoint with ?token=), once per
 * worker; `page` is the session's tab. A QA team copies this file next to
 * its specs and imports test and expect from it.
 */
import { test as base, expect, chromium } from '@playwright/test';

export const test = base.extend({
  browser: [
    async ({}, use) => {
      const endpoint = process.env.GLASSBOX_CDP_ENDPOINT;
      if (!endpoint) throw new Error('set GLASSBOX_CDP_ENDPOINT to the session\'s wsEndpoint?token=<token> (POST /sessions)');
      const browser = await chromium.connectOverCDP(endpoint, { timeout: 120000 });
      await use(browser);
      await browser.close();
    },
    { scope: 'worker' },
  ],
  context: async ({ browser }, use) => {
    await use(browser.contexts()[0]);
  },
  page: async ({ context }, use) => {
    await use(context.pages()[0] || (await context.newPage()));
  },
});

export { expect };
