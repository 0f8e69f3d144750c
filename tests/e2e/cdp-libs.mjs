/*
 * cdp-libs.mjs - the CDP clients QA suites use (pinned devDependencies of
 * this folder's package.json), re-exported for tests/integration and
 * bench, whose imports resolve from here.
 */
export { chromium } from 'playwright-core';
export { default as puppeteer } from 'puppeteer-core';
export { default as WebSocket } from 'ws';
