// A live refresh keeps where the reader was (dashboard.md, "Live
// updates"): focus on an element with no id (a queue's link; it went to
// the page's body), how far a table's frame was scrolled sideways on a
// narrow screen (it went back to 0 within a refresh, so the right-hand
// columns could not be read for long), and a text selection (it was
// cleared: the swap now waits while text in the region is selected). In
// a real browser, on the Queues view (a 5 s refresh), 390 px wide.
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { launchBrowser, newPage, signIn } from './support/browser.js';
import { ADMIN_TOKEN, startDashboard, type Dashboard } from './support/dashboard.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

let db: TestDatabase;
let d: Dashboard;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
  browser = await launchBrowser();
  page = (await newPage(browser)).page;
  await page.setViewportSize({ width: 390, height: 800 });
  await d.client.enqueue('report.build', { account: 'acme', rows: 1 });
  await page.goto(`${d.url}/ui`);
  await signIn(page, d.url, ADMIN_TOKEN);
  await page.waitForURL(`${d.url}/ui`);
  await page.goto(`${d.url}/ui/queues`);
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await d?.close();
  await db?.drop();
});

/** Marks the live region's table; a swap replaces it, so the mark is gone once one happened. */
const mark = () => page.evaluate(() => document.querySelector('#live .table-wrap').setAttribute('data-before-swap', ''));
const swapped = () => page.evaluate(() => document.querySelector('#live .table-wrap[data-before-swap]') === null);

it('keeps focus on a link without an id, and the frame scrolled where it was, across a refresh', async () => {
  const link = page.locator('#live a[href="/ui?queue=reports"]');
  await link.focus();
  const scrolled = await page.evaluate(() => {
    const frame = document.querySelector('#live .table-wrap');
    frame.scrollLeft = 200;
    return frame.scrollLeft;
  });
  expect(scrolled).toBeGreaterThan(0);
  await mark();
  // New counts, so the next refresh has something to swap in.
  await d.client.enqueue('report.build', { account: 'acme', rows: 2 });
  await expect.poll(swapped, { timeout: 15_000 }).toBe(true);
  expect(await page.evaluate(() => document.activeElement?.getAttribute('href'))).toBe('/ui?queue=reports');
  expect(await page.evaluate(() => document.querySelector('#live .table-wrap').scrollLeft)).toBe(scrolled);
}, 30_000);

it('waits while text in the region is selected, and swaps once it is not', async () => {
  await page.evaluate(() => {
    const range = document.createRange();
    range.selectNodeContents(document.querySelector('#live a[href="/ui?queue=reports"] code'));
    window.getSelection().removeAllRanges();
    window.getSelection().addRange(range);
  });
  await mark();
  await d.client.enqueue('report.build', { account: 'acme', rows: 3 });
  // Two refreshes' time (5 s each): the selection and the old table stay.
  await new Promise((r) => setTimeout(r, 11_000));
  expect(await swapped()).toBe(false);
  expect(await page.evaluate(() => String(window.getSelection()))).toBe('reports');
  await page.evaluate(() => window.getSelection().removeAllRanges());
  await expect.poll(swapped, { timeout: 15_000 }).toBe(true);
}, 40_000);
