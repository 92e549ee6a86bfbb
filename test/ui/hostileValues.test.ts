// Every dashboard view in a real browser (Debian's Chromium through
// playwright-core) over values that carry markup and run long: job types,
// queues, payload keys and values, errors, dedupe and concurrency keys,
// worker ids, builds, outbox topics and keys, alert keys and details holding
// `<img onerror>`, `</script><script>`, `javascript:` and unbreakable runs of
// hundreds of characters (as a job type of 128 characters is). Nothing
// executes (no dialog, no global set, no script error), and nothing widens
// the page: the document is no wider than the viewport and every table fits
// its frame, so no column is pushed out of view. Screenshots go to
// .workhorse/screenshots/.
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { launchBrowser, newPage, screenshot, signIn } from './support/browser.js';
import { ADMIN_TOKEN, startDashboard, type Dashboard } from './support/dashboard.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const window: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

const X = '<img src=x onerror=alert(1)></script><script>window.__injected=1</script>';
const run = (c: string, n: number) => c.repeat(n);

let db: TestDatabase;
let d: Dashboard;
let browser: Browser;
const ids: string[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
  browser = await launchBrowser();
  const payload = { [X]: X, url: 'javascript:alert(2)', long: run('L', 5000), [run('k', 600)]: 1 };
  for (let i = 0; i < 3; i++) {
    const job = await d.client.enqueue('blob.store', payload, {
      dedupeKey: `${X}${run('D', 400)}${i}`,
      concurrencyKey: `javascript:alert(3)${X}${run('C', 300)}`,
    });
    ids.push(job.id);
  }
  // What other SDKs, workers and deliverers can store: markup in types, queues and errors.
  await db.pool.query(`update workhorse.jobs set type = $1, queue = $2 where id = $3`, [`${X}${run('T', 300)}`, `javascript:${X}${run('Q', 300)}`, ids[0]]);
  await db.pool.query(`update workhorse.jobs set status = 'failed', attempt = 1, finished_at = now(), last_error = $1 where id = $2`, [
    { name: `<svg onload=alert(4)>`, message: `${X}${run('E', 3000)}`, stack: '</pre><script>alert(5)</script>' },
    ids[1],
  ]);
  await db.pool.query(
    `insert into workhorse.worker_registry (namespace, id, build, queues, types, heartbeat_ms) values ('default', $1, $2, $3, $4, 1000)`,
    [`w${X}${run('I', 500)}`, `<b>${X}</b>${run('B', 200)}`, [`<i>q</i>${X}`, run('q', 400)], [`javascript:alert(6)${run('t', 300)}`]],
  );
  await db.pool.query(`insert into workhorse.queues (namespace, name, paused) values ('default', $1, true)`, [`${X}${run('P', 300)}`]);
  await db.pool.query(
    `insert into workhorse.outbox_events (namespace, topic, key, payload, state, attempts, last_error) values ('default', $1, $2, $3, 'dead', 3, $4)`,
    [`t${X}${run('O', 400)}`, `javascript:alert(7)${X}${run('K', 300)}`, { [X]: X }, { message: `${X}${run('Z', 3000)}` }],
  );
  await db.pool.query(`insert into workhorse.alerts (namespace, rule, key, details) values ('default', $1, $2, $3)`, [
    `r${X}`,
    `${X}${run('A', 500)}`,
    { [X]: `${X}${run('V', 500)}` },
  ]);
});

afterAll(async () => {
  await browser?.close();
  await d?.close();
  await db?.drop();
});

describe('markup and long values in every view', () => {
  it('execute nothing and never widen the page or push a column out of view', { timeout: 90_000 }, async () => {
    const { context, page, problems } = await newPage(browser);
    const dialogs: string[] = [];
    page.on('dialog', async (dialog) => {
      dialogs.push(dialog.message());
      await dialog.dismiss();
    });
    await signIn(page, d.url, ADMIN_TOKEN);
    await page.waitForURL(`${d.url}/ui`);
    const views = ['/ui', '/ui?status=failed', ...ids.map((id) => `/ui/jobs/${id}`), '/ui/workers', '/ui/queues', '/ui/schedules', '/ui/alerts', '/ui/outbox'];
    for (const view of views) {
      const res = await page.goto(`${d.url}${view}`);
      expect(res?.status(), view).toBe(200);
      // One live refresh swaps the region in again.
      await page.waitForTimeout(view === '/ui' || view.startsWith('/ui?') ? 1800 : 2300);
      const seen = await page.evaluate(() => ({
        injected: window.__injected,
        pageWidth: document.documentElement.scrollWidth,
        viewport: document.documentElement.clientWidth,
        tables: [...document.querySelectorAll('.table-wrap')].map((w: any) => [w.scrollWidth, w.clientWidth]),
      }));
      await screenshot(page, `hostile${view.replace(/[^a-z0-9]+/gi, '-')}`);
      expect(seen.injected, view).toBeUndefined();
      expect(seen.pageWidth, `${view} is wider than the viewport`).toBeLessThanOrEqual(seen.viewport);
      for (const [scroll, client] of seen.tables) expect(scroll, `${view}: a table is wider than its frame`).toBeLessThanOrEqual(client + 1);
    }
    expect(dialogs).toEqual([]);
    expect(problems).toEqual([]);
    expect(d.logged).toEqual([]);
    await context.close();
  });
});
