// The dashboard in a real browser (Debian's Chromium, headless, through
// playwright-core) against a real server and database: sign in, watch jobs
// appear live, open a job, pause a queue by clicking (the database says
// paused; a running worker stops claiming from it), operator-pause a
// worker, retry a failed job, read the schedules and the charts; a wrong
// token cannot sign in, and a read-only session has no buttons and its
// POST is refused with 403. A screenshot of each view is saved under
// .workhorse/screenshots/.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defineSchedule } from '../../src/schedules/defineSchedule.js';
import { Schedules } from '../../src/schedules/schedules.js';
import { PermanentJobError } from '../../src/errorJson.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { launchBrowser, measureTransfer, newPage, screenshot, SCREENSHOT_DIR, signIn, worstContrast } from './support/browser.js';
import { ADMIN_TOKEN, READ_TOKEN, startDashboard, type Dashboard } from './support/dashboard.js';

// Browser globals for the functions page.evaluate runs in the page (the
// suite is type-checked without the DOM library).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const window: Record<string, unknown>;
declare const document: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

let db: TestDatabase;
let d: Dashboard;
let browser: Browser;
let admin: { context: BrowserContext; page: Page; problems: string[] };
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
  browser = await launchBrowser();
  admin = await newPage(browser);
});

afterAll(async () => {
  await Promise.all(workers.map((w) => w.stop()));
  await browser?.close();
  await d?.close();
  await db?.drop();
});

async function queuePaused(name: string): Promise<boolean> {
  const r = await db.pool.query<{ paused: boolean }>('select paused from workhorse.queues where namespace = $1 and name = $2', ['default', name]);
  return r.rows[0]?.paused ?? false;
}

async function jobRow(id: string): Promise<{ status: string; attempt: number; leased: boolean }> {
  const r = await db.pool.query<{ status: string; attempt: number; leased: boolean }>(
    'select j.status, j.attempt, exists (select 1 from workhorse.job_runtime r where r.job_id = j.id) as leased from workhorse.jobs j where j.id = $1',
    [id],
  );
  return r.rows[0]!;
}

function reportWorker(id: string): Worker {
  const w = new Worker(d.client, { workerId: id, queues: ['reports'], heartbeatMs: 200, pollMs: 50 }).handle('report.build', async (payload, ctx) => {
    const p = payload as { account: string; rows: number };
    const rows = await ctx.step('count rows', () => p.rows * 2);
    await ctx.progress({ done: rows });
    return { account: p.account, total: rows };
  });
  workers.push(w);
  return w;
}

describe('the dashboard in a browser', () => {
  it('signs in with a token, and the Secure, HttpOnly, SameSite=Strict cookie sticks on http://127.0.0.1', async () => {
    const { page, context } = admin;
    await page.goto(`${d.url}/ui`);
    expect(new URL(page.url()).pathname).toBe('/ui/sign-in');
    await screenshot(page, 'sign-in', false);
    await signIn(page, d.url, ADMIN_TOKEN);
    await page.waitForURL(`${d.url}/ui`);
    await expect.poll(() => page.getByRole('heading', { name: 'Namespace' }).isVisible()).toBe(true);
    const cookies = await context.cookies();
    expect(cookies).toEqual([expect.objectContaining({ name: '__Host-workhorse-session', path: '/', secure: true, httpOnly: true, sameSite: 'Strict' })]);
    expect(await page.locator('header .who').innerText()).toContain('ops (read, admin)');
  });

  it('shows jobs appear live as they are enqueued, without reloading the page', async () => {
    const { page } = admin;
    await page.evaluate(() => (window.sameDocument = true));
    const { id } = await d.client.enqueue('report.build', { account: 'acme', rows: 21 }, { concurrencyKey: 'tenant:acme' });
    const row = page.locator(`tr[data-job="${id}"]`);
    await row.waitFor({ timeout: 10_000 });
    expect(await row.innerText()).toMatch(/ready[\s\S]*key tenant:acme/);
    const w = reportWorker('ui-runner');
    void w.run();
    await expect.poll(() => row.locator('.badge').innerText(), { timeout: 10_000 }).toBe('succeeded');
    expect(await page.evaluate(() => window.sameDocument)).toBe(true);
    // The live label's time is written as every other time on the page: UTC, 24-hour.
    expect(await page.locator('#live-status').innerText()).toMatch(/^Live: updated \d\d:\d\d:\d\d UTC$/);
    await screenshot(page, 'namespace');
    await w.stop();
  });

  it('opens a job: payload, result, progress, the attempts ledger and the recorded steps', async () => {
    const { page } = admin;
    const [job] = (await d.client.admin.listJobs({ type: 'report.build', limit: 1 })).jobs;
    await page.getByRole('link', { name: `#${job!.id}` }).click();
    await page.waitForURL(`${d.url}/ui/jobs/${job!.id}`);
    await expect.poll(() => page.getByRole('heading', { name: `Job #${job!.id} report.build` }).isVisible()).toBe(true);
    expect(await page.getByLabel('payload', { exact: true }).innerText()).toContain('"account": "acme"');
    expect(await page.getByLabel('result', { exact: true }).innerText()).toContain('"total": 42');
    expect(await page.getByLabel('progress', { exact: true }).innerText()).toContain('"done": 42');
    const ledger = page.getByRole('table', { name: 'Attempts of this job' });
    expect(await ledger.innerText()).toMatch(/1\s+1\s+ui-runner\s+succeeded/);
    const steps = page.getByRole('table', { name: 'Recorded steps of this job' });
    expect(await steps.innerText()).toContain('count rows');
    await screenshot(page, 'job');
  });

  it('pauses a queue by clicking: the database says paused and a running worker stops claiming from it', async () => {
    const { page } = admin;
    const w = reportWorker('ui-claimer');
    void w.run();
    const { id: before } = await d.client.enqueue('report.build', { account: 'before', rows: 1 });
    await waitFor(() => jobRow(before), (r) => r.status === 'succeeded', { what: 'the worker to run a job before the pause' });

    await page.goto(`${d.url}/ui/queues`);
    await page.getByRole('button', { name: 'Pause queue reports' }).click();
    await page.waitForURL(/\/ui\/queues\?done=queue-paused&subject=reports$/);
    expect(await page.getByRole('status').innerText()).toBe('Queue reports paused: no worker claims from it until it is resumed.');
    expect(await queuePaused('reports')).toBe(true);

    const { id: held } = await d.client.enqueue('report.build', { account: 'held', rows: 1 });
    await sleep(1500); // thirty of the worker's 50 ms polls, seven heartbeats
    expect(await jobRow(held)).toEqual({ status: 'ready', attempt: 0, leased: false });
    const registry = (await d.client.admin.listWorkers()).find((x) => x.id === 'ui-claimer')!;
    // Still heartbeating (alive, just not claiming): seen within a few of its 200 ms heartbeats.
    expect(Date.now() - registry.lastSeen.getTime()).toBeLessThan(5000);
    // The live refresh shows the held job as due in the paused queue.
    await expect.poll(() => page.locator('tr[data-queue="reports"]').innerText(), { timeout: 10_000 }).toMatch(/paused\s+1\s/);
    await screenshot(page, 'queues');

    // Resume from the keyboard: focus the button, press Enter.
    await page.getByRole('button', { name: 'Resume queue reports' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForURL(/done=queue-resumed/);
    expect(await queuePaused('reports')).toBe(false);
    await waitFor(() => jobRow(held), (r) => r.status === 'succeeded', { what: 'the held job to run once resumed' });
    await w.stop();
  });

  it('operator-pauses a worker from the Workers view; the worker stops claiming', async () => {
    const { page } = admin;
    const w = reportWorker('ui-operated');
    void w.run();
    await waitFor(() => w.runtimeState().registered, Boolean, { what: 'registration' });
    await page.goto(`${d.url}/ui/workers`);
    await page.getByRole('button', { name: 'Pause worker ui-operated' }).click();
    await page.waitForURL(/done=worker-paused/);
    const r = await db.pool.query<{ operator_paused: boolean }>('select operator_paused from workhorse.worker_registry where id = $1', ['ui-operated']);
    expect(r.rows[0]!.operator_paused).toBe(true);
    await waitFor(() => w.isPaused(), Boolean, { what: 'the pause to reach the worker' });
    await expect.poll(() => page.locator('tr[data-worker="ui-operated"]').innerText()).toMatch(/paused/);
    await screenshot(page, 'workers');
    await page.getByRole('button', { name: 'Resume worker ui-operated' }).click();
    await page.waitForURL(/done=worker-resumed/);
    await waitFor(() => w.isPaused(), (p) => !p, { what: 'the resume to reach the worker' });
    await w.stop();
  });

  it('retries a failed job from its page', async () => {
    const { page } = admin;
    const { id } = await d.client.enqueue('email.send', { to: 'ops@example.com', subject: 'nightly' }, { maxAttempts: 1 });
    const failing = new Worker(d.client, { workerId: 'ui-failing', queues: ['default'], listen: false }).handle('email.send', async () => {
      throw new PermanentJobError('mailbox full');
    });
    expect(await failing.runOnce()).toBe(true);
    await failing.stop();
    expect((await jobRow(id)).status).toBe('failed');

    await page.goto(`${d.url}/ui/jobs/${id}`);
    expect(await page.getByRole('table', { name: 'Attempts of this job' }).innerText()).toMatch(/ui-failing\s+failed/);
    // The message as its text (it was a JSON string of escapes), the other fields as JSON.
    expect(await page.getByLabel('last error: message', { exact: true }).innerText()).toBe('mailbox full');
    expect(await page.getByLabel('last error', { exact: true }).innerText()).toContain('"name": "PermanentJobError"');
    // The stack is shown as its lines, not as one JSON string of \n escapes.
    const stack = await page.getByLabel('last error: stack', { exact: true }).innerText();
    expect(stack).toMatch(/^PermanentJobError: mailbox full\n\s+at /);
    expect(await page.getByLabel('last error', { exact: true }).innerText()).not.toContain('"stack"');
    await page.getByRole('button', { name: `Retry job #${id}` }).click();
    await page.waitForURL(`${d.url}/ui/jobs/${id}?done=job-retried&subject=${id}`);
    expect(await jobRow(id)).toEqual({ status: 'ready', attempt: 0, leased: false });
    expect(await page.getByRole('status').innerText()).toBe(`Job #${id} is ready again with a fresh attempt budget.`);
  });

  it('runs a scheduled job now from its page, saying it is due now (not "ready again with a fresh attempt budget")', async () => {
    const { page } = admin;
    const { id } = await d.client.enqueue('email.send', { to: 'later@example.com', subject: 'later' }, { delayMs: 3_600_000 });
    await page.goto(`${d.url}/ui/jobs/${id}`);
    await page.getByRole('button', { name: `Run now job #${id}` }).click();
    await page.waitForURL(`${d.url}/ui/jobs/${id}?done=job-run-now&subject=${id}`);
    expect(await page.getByRole('status').innerText()).toBe(`Job #${id} is due now.`);
    const due = await db.pool.query<{ due: boolean }>('select run_at <= now() as due from workhorse.jobs where id = $1', [id]);
    expect(due.rows[0]!.due).toBe(true);
  });

  it('keeps every view as wide as a narrow window: wide tables scroll inside their box, action buttons included', async () => {
    const narrow = await browser.newContext({ viewport: { width: 390, height: 800 } });
    const page = await narrow.newPage();
    try {
      await signIn(page, d.url, ADMIN_TOKEN);
      const w = reportWorker('ui-narrow-a-worker-with-a-long-id-0123456789');
      const run = w.run();
      await waitFor(async () => (await db.pool.query('select 1 from workhorse.worker_registry where id = $1', [w.workerId])).rowCount, (n) => n === 1, { what: 'the worker to register' });
      for (const view of ['/ui/workers', '/ui/queues', '/ui/outbox', '/ui/decisions']) {
        await page.goto(`${d.url}${view}`);
        const widths = (await page.evaluate(() => ({ page: document.scrollingElement.scrollWidth, window: window.innerWidth }))) as { page: number; window: number };
        expect(widths.page, view).toBeLessThanOrEqual(widths.window);
      }
      // The namespace table's note keeps a readable width (the table scrolls): it was squeezed to about
      // 57 px, and a failed job's error made its row over 1,000 px tall.
      const { id } = await d.client.enqueue('email.send', { to: 'narrow@example.com', subject: 'narrow' });
      await db.pool.query(
        "update workhorse.jobs set status = 'failed', finished_at = now(), last_error = jsonb_build_object('message', repeat('connection reset by peer while writing ', 5)) where id = $1",
        [id],
      );
      await page.goto(`${d.url}/ui?status=failed`);
      const note = page.locator(`tr[data-job="${id}"] td`).last();
      expect(await note.innerText()).toContain('last error: connection reset by peer');
      expect(((await note.boundingBox()) ?? { width: 0 }).width).toBeGreaterThanOrEqual(200);
      const widths = (await page.evaluate(() => ({ page: document.scrollingElement.scrollWidth, window: window.innerWidth }))) as { page: number; window: number };
      expect(widths.page).toBeLessThanOrEqual(widths.window);
      await screenshot(page, 'namespace-narrow');
      await w.stop();
      await run;
    } finally {
      await narrow.close();
    }
  });

  it('lists the schedules with their cadence, next and last fire', async () => {
    const { page } = admin;
    await new Schedules(d.client).define([
      defineSchedule({ name: 'nightly-report', job: 'report.build', payload: { account: 'all', rows: 0 }, cron: '0 3 * * *', timezone: 'Europe/Paris' }),
      defineSchedule({ name: 'heartbeat-mail', job: 'email.send', payload: { to: 'a@example.com', subject: 'ping' }, everyMs: 60_000 }),
    ]);
    await page.goto(`${d.url}/ui/schedules`);
    const nightly = await page.locator('tr[data-schedule="nightly-report"]').innerText();
    expect(nightly).toMatch(/cron 0 3 \* \* \* \(Europe\/Paris\)/);
    expect(nightly).toMatch(/report\.build on reports/);
    // The next 03:00 in Paris is anywhere up to a day away, depending on when the test runs.
    expect(nightly).toMatch(/in \d+(\.\d)? (s|min|h|d)\b/);
    expect(await page.locator('tr[data-schedule="heartbeat-mail"]').innerText()).toMatch(/every 1 min[\s\S]*in \d/);
    expect(nightly).not.toContain('declared by the app');
    // A slot an app's start stored says so: only builds that declare it fire it.
    await d.client.protocol.upsertSchedules(d.client.pool, d.client.namespace, [
      { name: 'app-digest', schedule_namespace: 'default', cron: null, timezone: null, interval_ms: 3_600_000, job: { type: 'email.send', payload: { to: 'a@example.com', subject: 'digest' } }, declared: true },
    ]);
    await page.goto(`${d.url}/ui/schedules`);
    expect(await page.locator('tr[data-schedule="app-digest"]').innerText()).toMatch(/enabled\s+declared by the app/);
    await screenshot(page, 'schedules');
  });

  it('draws the throughput and backlog charts of each queue from the database', async () => {
    const { page } = admin;
    await page.goto(`${d.url}/ui/queues`);
    const figure = page.locator('figure[data-chart]').filter({ hasText: 'reports: throughput' });
    await figure.locator('svg rect').first().waitFor();
    const r = await db.pool.query<{ n: number }>(
      // The ledger's attempts, and the first-attempt successes only job rows hold.
      `select ((select count(*) from workhorse.job_attempts a join workhorse.jobs j on j.id = a.job_id
          where j.queue = 'reports' and a.finished_at > now() - interval '1 hour')
       + (select count(*) from workhorse.jobs j where j.queue = 'reports' and j.status = 'succeeded' and j.attempt = 1
          and j.finished_at > now() - interval '1 hour'))::int as n`,
    );
    expect(await figure.locator('figcaption').innerText()).toContain(`${r.rows[0]!.n} in all`);
    expect(await figure.locator('svg rect').count()).toBeGreaterThan(0);
    const backlog = page.locator('figure[data-chart]').filter({ hasText: 'reports: backlog' });
    expect(await backlog.locator('svg path.c-line').count()).toBe(1);
    await backlog.getByText('Data table').click();
    expect(await backlog.getByRole('table').locator('tbody tr').count()).toBe(60);
    // A live refresh replaces the charts and keeps the open table open (it closed it: the details had no id).
    await page.evaluate(() => document.querySelector('#live figure').setAttribute('data-stale', ''));
    await expect.poll(() => page.locator('#live figure[data-stale]').count(), { timeout: 15_000 }).toBe(0);
    expect(await backlog.locator('details').evaluate((d: { open: boolean }) => d.open)).toBe(true);
  });

  it('refuses a wrong token; a read-only session has no buttons and its POST is refused with 403', async () => {
    const reader = await newPage(browser);
    try {
      const { page, context } = reader;
      await signIn(page, d.url, 'not-the-token-0123456789');
      await expect.poll(() => page.getByRole('alert').innerText()).toBe('That token is not valid on this server.');
      expect(await context.cookies()).toEqual([]);
      const anonymous = await page.evaluate(async () => (await fetch('/ui/queues/reports/pause', { method: 'POST' })).status);
      expect(anonymous).toBe(401);

      await signIn(page, d.url, READ_TOKEN);
      await page.waitForURL(`${d.url}/ui`);
      await page.goto(`${d.url}/ui/queues`);
      expect(await page.getByRole('button', { name: /^(Pause|Resume) queue/ }).count()).toBe(0);
      await screenshot(page, 'queues-read-only');
      const [failed] = (await d.client.admin.listJobs({ limit: 1 })).jobs;
      await page.goto(`${d.url}/ui/jobs/${failed!.id}`);
      expect(await page.getByRole('button', { name: /^(Retry|Run now|Cancel) job/ }).count()).toBe(0);
      // The session's own CSRF token, from this site's page: only the scope is missing.
      const status = await page.evaluate(async () => {
        const csrf = document.querySelector('input[name="csrf"]').value as string;
        const res = await fetch('/ui/queues/reports/pause', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ csrf }) });
        return { status: res.status, text: await res.text() };
      });
      expect(status.status).toBe(403);
      expect(status.text).toContain('token &quot;viewer&quot; lacks the &quot;admin&quot; scope');
      expect(await queuePaused('reports')).toBe(false);
      expect(reader.problems.filter((p) => !p.includes('401') && !p.includes('403'))).toEqual([]);
    } finally {
      await reader.context.close();
    }
  });

  it('keeps text at a contrast of 4.5:1 or more, starts with a skip link, and pauses live updates on request', async () => {
    const { page } = admin;
    await page.goto(`${d.url}/ui`);
    const worst = await worstContrast(page);
    expect(worst.ratio, worst.what).toBeGreaterThanOrEqual(4.5);

    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent as string)).toBe('Skip to content');

    await page.getByRole('button', { name: 'Pause live updates' }).click();
    expect(await page.getByRole('button', { name: 'Resume live updates' }).getAttribute('aria-pressed')).toBe('true');
    const { id } = await d.client.enqueue('report.build', { account: 'quiet', rows: 1 });
    await sleep(2500);
    expect(await page.locator(`tr[data-job="${id}"]`).count()).toBe(0);
    await page.getByRole('button', { name: 'Resume live updates' }).click();
    await page.locator(`tr[data-job="${id}"]`).waitFor({ timeout: 5000 });
    expect(admin.problems).toEqual([]);
  });

  it('transfers a small page load: the page and its two assets, then the page alone once they are cached', async () => {
    const { transfer, close } = await measureTransfer(browser, `${d.url}/ui`, READ_TOKEN);
    try {
      writeFileSync(join(SCREENSHOT_DIR, 'transfer.json'), JSON.stringify(transfer, null, 2));
      const { cold, warm } = transfer;
      // Nothing from anywhere else; the icon is the browser's to fetch or not.
      expect(Object.keys(cold.sizes)).toEqual(expect.arrayContaining(['/ui', '/ui/assets/dashboard.css', '/ui/assets/dashboard.js']));
      expect(Object.keys(cold.sizes).every((p) => p === '/ui' || p.startsWith('/ui/assets/'))).toBe(true);
      expect(cold.sizes['/ui/assets/dashboard.js']).toBeGreaterThan(1000);
      // The icon may be fetched on either load (or neither): the browser decides when.
      expect(Object.keys(warm.sizes).filter((p) => p !== '/ui/assets/icon.svg')).toEqual(['/ui']);
      expect(cold.bytes).toBeLessThan(30_000);
      expect(warm.bytes).toBeLessThan(cold.bytes);
    } finally {
      await close();
    }
  });
});
