/*
 * form.spec.mjs - a small Playwright Test spec against the fixture site
 * (fixtures/site, at SITE_URL), run on a glassbox session through its CDP
 * endpoint: navigate, fill, click, assert the text, screenshot.
 */
import { test, expect } from './glassbox.fixture.mjs';

const SITE = process.env.SITE_URL;
const SAVED = process.env.EXPECT_SAVED || 'Saved: Ada';

test('fill the form and save it', async ({ page }, testInfo) => {
  const res = await page.goto(`${SITE}/form.html`);
  expect(res.status()).toBe(200);
  await page.fill('#name', 'Ada');
  await page.click('#save');
  await expect(page.locator('#status')).toHaveText(SAVED);
  const png = await page.screenshot({ path: testInfo.outputPath('saved.png') });
  expect(png.subarray(1, 4).toString()).toBe('PNG');
});

test('follow to the second page', async ({ page }) => {
  await page.goto(`${SITE}/second.html`);
  await expect(page).toHaveTitle(/Second/);
});
