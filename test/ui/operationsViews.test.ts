// The dashboard's Alerts and Outbox views in a real browser (Debian's
// Chromium through playwright-core) against a real server and database.
// Alerts: rules evaluated for real (a backlog in two queues, one then
// drained) show as open and resolved, with their details. Outbox: an event
// whose delivery failed for good (dead, with its error) and a pending one;
// an admin retries the dead one by clicking (the database has it pending,
// due now, with a fresh attempt budget) and discards the pending one (gone
// from the database); a read-only session has no buttons and its POST is
// refused with 403, changing nothing. Screenshots go to
// .workhorse/screenshots/.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateAlerts } from '../../src/alerts/alertsSlot.js';
import { resolveThresholds } from '../../src/alerts/alertRules.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { launchBrowser, newPage, screenshot, signIn, worstContrast } from './support/browser.js';
import { ADMIN_TOKEN, READ_TOKEN, startDashboard, type Dashboard } from './support/dashboard.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

let db: TestDatabase;
let d: Dashboard;
let browser: Browser;

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await d?.close();
  await db?.drop();
});

async function session(token: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const s = await newPage(browser);
  await signIn(s.page, d.url, token);
  await s.page.waitForURL(`${d.url}/ui`);
  return s;
}

async function event(id: string): Promise<{ state: string; attempts: number; due: boolean } | undefined> {
  const r = await db.pool.query<{ state: string; attempts: number; due: boolean }>(
    'select state, attempts, available_at <= now() as due from workhorse.outbox_events where id = $1',
    [id],
  );
  return r.rows[0];
}

/**
 * Runs one delivery round as a deliverer would: every due event is leased,
 * `failing` fails for good (one attempt allowed) with `error`, the rest are
 * delivered (the alert events the first test published among them).
 */
async function deliverRound(failing: string | null, error: unknown = null): Promise<void> {
  const { protocol, pool, namespace } = d.client;
  const leased = await protocol.leaseOutbox(pool, namespace, 'ui-test', 100, 60_000);
  if (failing !== null) expect(leased.map((e) => e.id)).toContain(failing);
  await protocol.settleOutbox(
    pool,
    namespace,
    'ui-test',
    { delivered: leased.map((e) => e.id).filter((id) => id !== failing), failed: failing === null ? [] : [{ id: failing, error }], released: [] },
    { maxAttempts: 1, baseMs: 1000, maxMs: 1000 },
  );
}

describe('the Alerts and Outbox views in a browser', () => {
  it('lists open and resolved alerts with their rule, key, times and details', async () => {
    const backlog = { backlog: resolveThresholds({ backlog: { max: 1 } } as never).backlog! };
    const jobs = [];
    for (let i = 0; i < 2; i++) jobs.push(await d.client.enqueue('email.send', { to: `u${i}@example.com`, subject: 's' }));
    for (let i = 0; i < 2; i++) jobs.push(await d.client.enqueue('report.build', { account: `a${i}`, rows: 1 }));
    await evaluateAlerts(d.client, backlog);
    for (const j of jobs.slice(2)) await d.client.cancel(j.id);
    await evaluateAlerts(d.client, backlog);
    const stored = await d.client.alerts();
    expect(stored.map((a) => [a.rule, a.key, a.state]).sort()).toEqual([
      ['backlog', 'default', 'open'],
      ['backlog', 'reports', 'resolved'],
    ]);

    const s = await session(READ_TOKEN);
    try {
      const { page } = s;
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Alerts' }).click();
      await page.waitForURL(`${d.url}/ui/alerts`);
      const open = page.getByRole('table', { name: 'Open alerts' });
      await open.waitFor({ timeout: 10_000 });
      // No sys.alerts slot runs here: the page says nothing evaluates the rules, rather than look healthy.
      expect(await page.locator('#alerts-unevaluated').innerText()).toMatch(/^Nothing evaluates the alert rules in this namespace: the sys\.alerts slot does not exist/);
      const openRows = await open.locator('tbody tr').allInnerTexts();
      expect(openRows).toHaveLength(1);
      expect(openRows[0]).toMatch(/backlog\s+default\s+open\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC[\s\S]*·/);
      const openDetails = stored.find((a) => a.state === 'open')!.details;
      for (const [k, v] of Object.entries(openDetails)) expect(openRows[0]).toContain(`${k} ${typeof v === 'string' ? v : JSON.stringify(v)}`);
      const resolved = await page.getByRole('table', { name: /^Resolved alerts/ }).locator('tbody tr').allInnerTexts();
      expect(resolved).toHaveLength(1);
      expect(resolved[0]).toMatch(/backlog\s+reports\s+resolved\s+\d{4}-\d\d-\d\d [\s\S]*UTC[\s\S]*\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
      await screenshot(page, 'alerts');
      const contrast = await worstContrast(page);
      expect(contrast.ratio, contrast.what).toBeGreaterThanOrEqual(4.5);
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
  });

  it('shows dead and pending events; an admin retries the dead one and discards the pending one by clicking', async () => {
    const dead = (await d.client.publish('order.paid', { order: 1 }, { key: 'order-1' })).id;
    await deliverRound(dead, { message: 'sink answered 503' });
    expect(await event(dead)).toMatchObject({ state: 'dead', attempts: 1 });
    const pending = (await d.client.publish('order.shipped', { order: 2 }, { key: 'order-2' })).id;

    const s = await session(ADMIN_TOKEN);
    try {
      const { page } = s;
      await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Outbox' }).click();
      await page.waitForURL(`${d.url}/ui/outbox`);
      const deadRow = page.locator(`tr[data-event="${dead}"]`);
      await deadRow.waitFor({ timeout: 10_000 });
      expect(await deadRow.innerText()).toMatch(new RegExp(`#${dead}\\s+order.paid\\s+order-1\\s+dead\\s+1\\s+[\\s\\S]*sink answered 503`));
      const pendingRow = page.locator(`tr[data-event="${pending}"]`);
      expect(await pendingRow.innerText()).toMatch(new RegExp(`#${pending}\\s+order.shipped\\s+order-2\\s+pending\\s+0\\s+`));
      await screenshot(page, 'outbox');
      const contrast = await worstContrast(page);
      expect(contrast.ratio, contrast.what).toBeGreaterThanOrEqual(4.5);

      await page.getByRole('button', { name: `Retry event #${dead}` }).click();
      await page.waitForURL(/\/ui\/outbox\?done=event-retried/);
      expect(await page.getByRole('status').innerText()).toBe(`Outbox event #${dead} is due now with a fresh attempt budget.`);
      expect(await event(dead)).toEqual({ state: 'pending', attempts: 0, due: true });
      expect(await page.locator(`tr[data-event="${dead}"]`).innerText()).toMatch(/pending\s+0/);

      // Discarding asks first: dismissed, nothing happens; accepted, the event is gone.
      const questions: string[] = [];
      page.once('dialog', (dialog) => {
        questions.push(dialog.message());
        void dialog.dismiss();
      });
      await page.getByRole('button', { name: `Discard event #${pending}` }).click();
      await expect.poll(() => questions.length).toBe(1);
      expect(questions[0]).toBe(`Discard outbox event #${pending}? It will never be delivered.`);
      expect(await event(pending)).toBeDefined();
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: `Discard event #${pending}` }).click();
      await page.waitForURL(/\/ui\/outbox\?done=event-discarded/);
      expect(await event(pending)).toBeUndefined();
      expect(await page.locator(`tr[data-event="${pending}"]`).count()).toBe(0);

      // Filtered to one state and topic.
      await page.getByLabel('State').selectOption('pending');
      await page.getByLabel('Topic').fill('order.paid');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/state=pending&topic=order.paid/);
      expect(await page.locator('tr[data-event]').count()).toBe(1);
      await page.getByLabel('State').selectOption('dead');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.locator('#outbox-empty').waitFor({ timeout: 10_000 });
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
  });

  it('answers an action back to the filtered page it came from, so the next dead event is the next row', async () => {
    const first = (await d.client.publish('invoice.failing', { n: 1 })).id;
    await deliverRound(first, { message: 'boom' });
    const second = (await d.client.publish('invoice.failing', { n: 2 })).id;
    await deliverRound(second, { message: 'boom' });
    await d.client.publish('invoice.later', { n: 3 });
    const s = await session(ADMIN_TOKEN);
    try {
      const { page } = s;
      await page.goto(`${d.url}/ui/outbox?state=dead&topic=invoice.failing`);
      await page.locator(`tr[data-event="${second}"]`).waitFor({ timeout: 10_000 });
      await page.getByRole('button', { name: `Retry event #${second}` }).click();
      // It answered to /ui/outbox: unfiltered, its first row a pending event of another topic.
      await page.waitForURL(new RegExp(`/ui/outbox\\?state=dead&topic=invoice.failing&done=event-retried&subject=${second}$`));
      expect(await page.getByRole('status').innerText()).toBe(`Outbox event #${second} is due now with a fresh attempt budget.`);
      expect(await page.locator('tr[data-event]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-event')))).toEqual([first]);
      page.once('dialog', (dialog) => void dialog.accept());
      await page.getByRole('button', { name: `Discard event #${first}` }).click();
      await page.waitForURL(new RegExp(`/ui/outbox\\?state=dead&topic=invoice.failing&done=event-discarded&subject=${first}$`));
      await page.locator('#outbox-empty').waitFor({ timeout: 10_000 });
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
    expect(await event(first)).toBeUndefined();
    expect(await event(second)).toMatchObject({ state: 'pending' });
  });

  it('a read-only session sees the outbox without buttons, and its retry and discard POSTs are refused with 403', async () => {
    const id = (await d.client.publish('order.refunded', { order: 3 })).id;
    await deliverRound(id, { message: 'boom' });
    const s = await session(READ_TOKEN);
    try {
      const { page } = s;
      await page.goto(`${d.url}/ui/outbox?state=dead`);
      await page.locator(`tr[data-event="${id}"]`).waitFor({ timeout: 10_000 });
      expect(await page.getByRole('button', { name: /^(Retry|Discard) event/ }).count()).toBe(0);
      await screenshot(page, 'outbox-read-only');
      const statuses = await page.evaluate(async (eventId: string) => {
        const csrf = document.querySelector('input[name="csrf"]').value as string;
        const post = async (what: string) =>
          (await fetch(`/ui/outbox/${eventId}/${what}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf }) })).status;
        return [await post('retry'), await post('discard')];
      }, id);
      expect(statuses).toEqual([403, 403]);
    } finally {
      await s.context.close();
    }
    expect(await event(id)).toMatchObject({ state: 'dead', attempts: 1 });
  });

  it('refuses to retry an event that is not dead or waiting (a delivered one) with 409, and an id that is not one with 400', async () => {
    const id = (await d.client.publish('order.closed', { order: 4 })).id;
    await deliverRound(null);
    expect(await event(id)).toMatchObject({ state: 'delivered' });
    const post = (path: string) => fetch(`${d.url}${path}`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    const conflict = await post(`/ui/outbox/${id}/retry`);
    expect(conflict.status).toBe(409);
    expect(await conflict.text()).toContain(`outbox event ${id} was not retried`);
    expect((await post('/ui/outbox/0/discard')).status).toBe(400);
    expect((await post('/ui/outbox/99999999999999999999/retry')).status).toBe(400);
    expect(await event(id)).toMatchObject({ state: 'delivered' });
  });

  it('pages through more events than one page holds: Older events, then Newest, none skipped or repeated', async () => {
    const topic = 'order.paged';
    // 230 pending events (published in one transaction), newest first on the pages.
    const ids: string[] = [];
    const tx = await db.pool.connect();
    try {
      await tx.query('begin');
      for (let i = 0; i < 230; i++) ids.push((await d.client.publish(topic, { i }, { tx })).id);
      await tx.query('commit');
    } finally {
      tx.release();
    }
    const newestFirst = [...ids].reverse();
    const s = await session(READ_TOKEN);
    try {
      const { page } = s;
      const shown = async () => page.locator('tr[data-event]').evaluateAll((rows) => rows.map((r) => (r as { dataset: { event: string } }).dataset.event));
      await page.goto(`${d.url}/ui/outbox?state=pending&topic=${topic}`);
      expect(await shown()).toEqual(newestFirst.slice(0, 100));
      expect(await page.locator('#outbox-newest').count()).toBe(0);
      await page.locator('#outbox-older').click();
      await page.waitForURL(new RegExp(`before=${newestFirst[99]}`));
      expect(await shown()).toEqual(newestFirst.slice(100, 200));
      await screenshot(page, 'outbox-paged');
      await page.locator('#outbox-older').click();
      await page.waitForURL(new RegExp(`before=${newestFirst[199]}`));
      expect(await shown()).toEqual(newestFirst.slice(200));
      expect(await page.locator('#outbox-older').count()).toBe(0);
      await page.locator('#outbox-newest').click();
      await page.waitForURL(`${d.url}/ui/outbox?state=pending&topic=${topic}`);
      expect(await shown()).toEqual(newestFirst.slice(0, 100));
      // A cursor that is not an event id is a 400, not a page.
      expect((await page.goto(`${d.url}/ui/outbox?before=abc`))!.status()).toBe(400);
      expect(s.problems.filter((p) => !p.includes('400'))).toEqual([]);
    } finally {
      await s.context.close();
    }
    await d.client.outbox.discard(ids.slice(0, 1000));
  });
});
