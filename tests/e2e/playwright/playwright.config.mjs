/*
 * playwright.config.mjs - Playwright Test on a glassbox session's CDP
 * endpoint (glassbox.fixture.mjs): no browser of Playwright's own is
 * launched or downloaded. One worker: a session takes one client at a
 * time. PW_EXPECT_TIMEOUT_MS bounds an expectation (default 30 s: a
 * busy machine is slow). Results go to PW_OUTPUT_DIR (default: a temp dir), never into the
 * repository.
 */
import os from 'node:os';
import path from 'node:path';

export default {
  testDir: '.',
  testMatch: '*.spec.mjs',
  workers: 1,
  fullyParallel: false,
  retries: 0,
  timeout: 120000,
  expect: { timeout: Number(process.env.PW_EXPECT_TIMEOUT_MS) || 30000 },
  reporter: 'list',
  outputDir: process.env.PW_OUTPUT_DIR || path.join(os.tmpdir(), 'glassbox-playwright-results'),
};
