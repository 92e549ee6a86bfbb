// The dashboard's durable-execution views in a real browser (Debian's
// Chromium through playwright-core) against a real server, worker and
// database: the Job view shows what a sleeping job waits for and when it
// wakes, a parent's children (each linking to its own view, which links
// back to the parent) and a join; the Namespace view's note says what a
// waiting row waits for; on the Decisions view a person with the `decide`
// scope clicks a choice with a comment (which a live refresh keeps), and the database holds the choice,
// the session's token name as `by`, and the job finished with it. A
// read-only session sees the decisions without buttons and its POST is
// refused with 403, changing nothing. A comment of 4,000 characters (the
// API's limit) in any script goes through the form. Screenshots go to
// .workhorse/screenshots/.
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { launchBrowser, newPage, screenshot, signIn, worstContrast } from './support/browser.js';
import { ADMIN_TOKEN, READ_TOKEN, startDashboard, type Dashboard } from './support/dashboard.js';

/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
/* eslint-enable @typescript-eslint/no-explicit-any */

const DECIDE_TOKEN = 'ui-decide-token-0123456789';
const Order = defineJob({ type: 'order.approve', schema: z.object({ order: z.number() }) });
const Nap = defineJob({ type: 'nap', schema: z.object({}) });
const Child = defineJob({ type: 'family.child', schema: z.object({ n: z.number() }) });
const Parent = defineJob({ type: 'family.parent', schema: z.object({}) });
/** A decision whose one choice is a long unbroken value: its button squeezed every other row's columns. */
const LONG_CHOICE = `approve-${'x'.repeat(112)}`;
const LongChoice = defineJob({ type: 'order.long', schema: z.object({}) });

let db: TestDatabase;
let d: Dashboard;
let browser: Browser;
/** The application's own client: its job types, its worker. */
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db, {
    apiTokens: [
      { name: 'ops', token: ADMIN_TOKEN, scopes: ['read', 'admin'] },
      { name: 'viewer', token: READ_TOKEN, scopes: ['read'] },
      { name: 'approver-ana', token: DECIDE_TOKEN, scopes: ['read', 'decide'] },
    ],
  });
  browser = await launchBrowser();
  client = createClient({ connectionString: db.url, jobs: [Order, Nap, Child, Parent, LongChoice], poolMax: 6 });
  worker = new Worker(client, { workerId: 'ui-durable', queues: ['default'], concurrency: 8, heartbeatMs: 200, pollMs: 50 });
  worker.handle(Order, async (p, ctx) => {
    const dec = await ctx.waitForDecision('approve', { choices: ['ship', 'refund'], prompt: `Ship order ${p.order}?`, timeoutMs: 3_600_000 });
    return { choice: dec.choice, by: dec.by, comment: dec.comment };
  });
  worker.handle(LongChoice, async (_p, ctx) => (await ctx.waitForDecision('long', { choices: [LONG_CHOICE, 'no'], prompt: 'A long choice' })).choice);
  worker.handle(Nap, async (_p, ctx) => {
    await ctx.sleep('nap', 600_000);
    return 'woke';
  });
  worker.handle(Child, async (p, ctx) => {
    await ctx.waitForSignal('go', { key: `child-${p.n}` });
    return p.n;
  });
  worker.handle(Parent, async (_p, ctx) => {
    const first = await ctx.spawn('first', Child, { n: 1 });
    const second = await ctx.spawn('second', Child, { n: 2 });
    return ctx.join('both', [first, second]);
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await browser?.close();
  await d?.close();
  await db?.drop();
});

async function waiting(id: string): Promise<boolean> {
  return (await d.client.getJob(id))?.status === 'waiting';
}

async function session(token: string): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const s = await newPage(browser);
  await signIn(s.page, d.url, token);
  await s.page.waitForURL(`${d.url}/ui`);
  return s;
}

describe('the durable-execution views in a browser', () => {
  it('shows what a sleeping job waits for and when it wakes, on the Namespace and Job views', async () => {
    const { id } = await client.enqueue('nap', {});
    await waitFor(() => waiting(id), Boolean, { what: 'the nap job to sleep' });
    const s = await session(ADMIN_TOKEN);
    try {
      const { page } = s;
      await page.goto(`${d.url}/ui?status=waiting`);
      const row = page.locator(`tr[data-job="${id}"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.innerText()).toMatch(/waiting[\s\S]*sleeps nap, wakes in (9|10) min/);
      await screenshot(page, 'namespace-waiting');
      await row.getByRole('link', { name: `#${id}` }).click();
      await page.waitForURL(`${d.url}/ui/jobs/${id}`);
      const wait = page.locator('#job-wait');
      await wait.waitFor({ timeout: 10_000 });
      const text = await wait.innerText();
      expect(text).toMatch(/waits for\s+sleeping nap/);
      expect(text).toMatch(/since\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC/);
      expect(text).toMatch(/wakes at\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in (9|10) min/);
      const stored = (await d.client.getJob(id))!.wait!;
      expect(await wait.locator('time').nth(1).getAttribute('datetime')).toBe(stored.wakeAt!.toISOString());
      await screenshot(page, 'job-sleeping');
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
  });

  it('shows a parent\'s children with their status and links, the join it waits on, and the child\'s parent link', async () => {
    const { id } = await client.enqueue('family.parent', {});
    await waitFor(() => waiting(id), Boolean, { what: 'the parent to join its children' });
    const kids = await waitFor(
      async () => (await db.pool.query<{ name: string; child_id: string }>('select name, child_id::text from workhorse.job_children where parent_id = $1 order by name', [id])).rows,
      (r) => r.length === 2,
      { what: 'two children' },
    );
    await waitFor(async () => (await Promise.all(kids.map((k) => waiting(k.child_id)))).every(Boolean), Boolean, { what: 'both children waiting' });
    const s = await session(ADMIN_TOKEN);
    try {
      const { page } = s;
      await page.goto(`${d.url}/ui/jobs/${id}`);
      const family = page.getByRole('table', { name: 'Parent and children of this job' });
      await family.waitFor({ timeout: 10_000 });
      const rows = await family.locator('tbody tr').allInnerTexts();
      expect(rows).toHaveLength(2);
      const byName = new Map(kids.map((k) => [k.name, k.child_id]));
      expect(rows[0]).toMatch(new RegExp(`child\\s+first\\s+#${byName.get('first')} family.child\\s+waiting`));
      expect(rows[1]).toMatch(new RegExp(`child\\s+second\\s+#${byName.get('second')} family.child\\s+waiting`));
      const wait = await page.locator('#job-wait').innerText();
      expect(wait).toMatch(/waits for\s+its children both/);
      expect(wait).toMatch(/times out at\s+never/);
      expect(wait).toContain(`#${byName.get('first')}, #${byName.get('second')}`);
      // Stored as due in 9999 while it waits without a timeout: the page says what that means.
      expect(await page.locator('dl.facts').first().innerText()).toMatch(/run at\s+when what it waits for arrives/);
      await screenshot(page, 'job-parent');
      const jobContrast = await worstContrast(page);
      expect(jobContrast.ratio, jobContrast.what).toBeGreaterThanOrEqual(4.5);

      await page.locator(`#family-${byName.get('second')}`).click();
      await page.waitForURL(`${d.url}/ui/jobs/${byName.get('second')}`);
      const up = page.getByRole('table', { name: 'Parent and children of this job' });
      await up.waitFor({ timeout: 10_000 });
      expect(await up.locator('tbody tr').allInnerTexts()).toEqual([expect.stringMatching(new RegExp(`parent\\s+second\\s+#${id} family.parent\\s+waiting`))]);
      const childWait = await page.locator('#job-wait').innerText();
      expect(childWait).toMatch(/waits for\s+a signal go/);
      expect(childWait).toMatch(/key\s+child-2/);
      await screenshot(page, 'job-child');
      await page.locator(`#family-${id}`).click();
      await page.waitForURL(`${d.url}/ui/jobs/${id}`);
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
  });

  it('records a decision made by clicking: the choice, the comment, the session\'s token name as by, and the job finishes with it', async () => {
    const { id } = await client.enqueue('order.approve', { order: 7 });
    await waitFor(() => waiting(id), Boolean, { what: 'the order to wait for a decision' });
    const s = await session(DECIDE_TOKEN);
    try {
      const { page } = s;
      // The Job view shows the decision's prompt and choices, and where to make it.
      await page.goto(`${d.url}/ui/jobs/${id}`);
      const wait = page.locator('#job-wait');
      await wait.waitFor({ timeout: 10_000 });
      const text = await wait.innerText();
      expect(text).toMatch(/waits for\s+a decision by a person approve/);
      expect(text).toMatch(/times out at\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC \(in (59 min|1 h)/);
      expect(text).toMatch(/prompt\s+Ship order 7\?/);
      expect(text).toMatch(/choices\s+ship, refund/);
      await screenshot(page, 'job-decision');
      // The link leads to this job's own decisions (past the oldest 100 the list never showed it).
      await page.locator('#job-decide').click();
      await page.waitForURL(`${d.url}/ui/decisions?job=${id}`);
      expect(await page.locator('#decisions-job').innerText()).toMatch(new RegExp(`^The decisions job #${id} waits for\\. All decisions →$`));
      const row = page.locator(`tr[data-decision="${id}/approve"]`);
      await row.waitFor({ timeout: 10_000 });
      expect(await row.innerText()).toMatch(new RegExp(`#${id} order.approve on default\\s+approve\\s+Ship order 7\\?\\s+ship, refund`));
      await row.getByLabel('Comment (optional)').fill('paid by wire');
      // A live refresh replaces the row (its relative times changed) and keeps what was typed.
      await page.evaluate(() => document.querySelector('tr[data-decision]').setAttribute('data-before-refresh', ''));
      await expect.poll(() => page.locator('tr[data-before-refresh]').count(), { timeout: 15_000 }).toBe(0);
      expect(await row.getByLabel('Comment (optional)').inputValue()).toBe('paid by wire');
      await screenshot(page, 'decisions');
      const contrast = await worstContrast(page);
      expect(contrast.ratio, contrast.what).toBeGreaterThanOrEqual(4.5);
      await row.getByRole('button', { name: `ship on decision approve of job #${id}` }).click();
      await page.waitForURL(/\/ui\/decisions\?done=decision-made/);
      expect(await page.getByRole('status').innerText()).toBe(`Recorded "ship" on decision approve of job #${id}: the job resumes.`);

      const w = await db.pool.query<{ outcome: string; value: { choice: string; by: string; comment: string | null } }>(
        'select outcome, value from workhorse.job_waits where job_id = $1 and name = $2',
        [id, 'approve'],
      );
      expect(w.rows[0]).toMatchObject({ outcome: 'done', value: { choice: 'ship', by: 'approver-ana', comment: 'paid by wire' } });
      const done = await waitFor(() => d.client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the order to finish' });
      expect(done!.result).toEqual({ choice: 'ship', by: 'approver-ana', comment: 'paid by wire' });
      await expect.poll(() => row.count(), { timeout: 10_000 }).toBe(0);
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
  });

  it('Enter in the comment records no decision (it submitted the form with its first choice, one nobody picked); its line breaks are stored as typed', async () => {
    const { id } = await client.enqueue('order.approve', { order: 9 });
    await waitFor(() => waiting(id), Boolean, { what: 'the order to wait for a decision' });
    const s = await session(DECIDE_TOKEN);
    try {
      const { page } = s;
      await page.goto(`${d.url}/ui/decisions`);
      const row = page.locator(`tr[data-decision="${id}/approve"]`);
      await row.waitFor({ timeout: 10_000 });
      const comment = row.getByLabel('Comment (optional)');
      await comment.fill('first line');
      await comment.press('Enter');
      await comment.pressSequentially('second line');
      // Still on the page, nothing recorded; the comment holds both lines.
      await page.waitForTimeout(500);
      expect(page.url()).toBe(`${d.url}/ui/decisions`);
      expect(await comment.inputValue()).toBe('first line\nsecond line');
      const w = await db.pool.query<{ outcome: string | null }>('select outcome from workhorse.job_waits where job_id = $1 and name = $2', [id, 'approve']);
      expect(w.rows[0]?.outcome ?? null).toBeNull();
      expect((await d.client.getJob(id))?.status).toBe('waiting');
      // Clicked, the two lines are stored as typed: a browser posts a textarea's line break as CRLF.
      await row.getByRole('button', { name: `ship on decision approve of job #${id}` }).click();
      await page.waitForURL(/\/ui\/decisions\?done=decision-made/);
      const made = await db.pool.query<{ value: { comment: string } }>('select value from workhorse.job_waits where job_id = $1 and name = $2', [id, 'approve']);
      expect(made.rows[0]?.value.comment).toBe('first line\nsecond line');
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
  });

  it('a read-only session sees the decisions without buttons, and its POST is refused with 403 and changes nothing', async () => {
    const { id } = await client.enqueue('order.approve', { order: 8 });
    await waitFor(() => waiting(id), Boolean, { what: 'the order to wait for a decision' });
    for (const token of [READ_TOKEN, ADMIN_TOKEN]) {
      const s = await session(token);
      try {
        const { page } = s;
        await page.goto(`${d.url}/ui/decisions`);
        const row = page.locator(`tr[data-decision="${id}/approve"]`);
        await row.waitFor({ timeout: 10_000 });
        expect(await page.locator('form.decide').count()).toBe(0);
        expect(await page.getByRole('button', { name: /on decision/ }).count()).toBe(0);
        expect(await page.locator('#decisions-readonly').innerText()).toContain('decide');
        if (token === READ_TOKEN) await screenshot(page, 'decisions-read-only');
        // The session's own CSRF token, from this site's page: only the scope is missing.
        const res = await page.evaluate(async (jobId: string) => {
          const csrf = document.querySelector('input[name="csrf"]').value as string;
          const r = await fetch(`/ui/jobs/${jobId}/decisions/approve`, {
            method: 'POST',
            headers: { 'content-type': 'application/x-www-form-urlencoded' },
            body: new URLSearchParams({ csrf, choice: 'ship' }),
          });
          return { status: r.status, text: await r.text() };
        }, id);
        expect(res.status).toBe(403);
        expect(res.text).toContain('lacks the &quot;decide&quot; scope');
      } finally {
        await s.context.close();
      }
    }
    const w = await db.pool.query('select resolved_at, value from workhorse.job_waits where job_id = $1 and name = $2', [id, 'approve']);
    expect(w.rows[0]).toEqual({ resolved_at: null, value: null });
    expect(await waiting(id)).toBe(true);
  });

  it('keeps the Decisions table readable beside a choice that is one long unbroken value', async () => {
    const long = await client.enqueue('order.long', {});
    const order = await client.enqueue('order.approve', { order: 11 });
    await waitFor(async () => (await waiting(long.id)) && (await waiting(order.id)), Boolean, { what: 'both to wait for a decision' });
    const s = await session(DECIDE_TOKEN);
    try {
      const { page } = s;
      await page.setViewportSize({ width: 1366, height: 900 });
      await page.goto(`${d.url}/ui/decisions`);
      await page.locator(`tr[data-decision="${order.id}/approve"]`).waitFor({ timeout: 10_000 });
      const seen = await page.evaluate(
        ([jobId, longId]: [string, string]) => {
          const cells = [...document.querySelector(`tr[data-decision="${jobId}/approve"]`).querySelectorAll('td')].map((td) => Math.round(td.getBoundingClientRect().width));
          const button = [...document.querySelector(`tr[data-decision="${longId}/long"]`).querySelectorAll('button')].find((b) => b.textContent.startsWith('approve-'));
          const wrap = document.querySelector('.table-wrap');
          return { cells, button: Math.round(button.getBoundingClientRect().width), fits: wrap.scrollWidth <= wrap.clientWidth + 1 };
        },
        [order.id, long.id] as [string, string],
      );
      await screenshot(page, 'decisions-long-choice');
      // The long choice made the Decide column 1,125 px wide at this width: the job column 43 px, the prompt 78.
      expect(seen.fits).toBe(true);
      expect(seen.button).toBeLessThanOrEqual(260);
      expect(seen.cells[6]).toBeLessThanOrEqual(400);
      expect(Math.min(seen.cells[0]!, seen.cells[2]!)).toBeGreaterThanOrEqual(70);
      expect(s.problems).toEqual([]);
    } finally {
      await s.context.close();
    }
    await client.decide(long.id, 'long', { choice: 'no', by: 'test' });
  });

  it('takes a comment as long as the API takes (4,000 characters), in any script', async () => {
    const { id } = await client.enqueue('order.approve', { order: 10 });
    await waitFor(() => waiting(id), Boolean, { what: 'the order to wait for a decision' });
    const comment = 'é'.repeat(3998) + '😀';
    const s = await session(DECIDE_TOKEN);
    try {
      const { page } = s;
      await page.goto(`${d.url}/ui/decisions`);
      const status = await page.evaluate(
        async ([jobId, text]: [string, string]) => {
          const csrf = document.querySelector('input[name="csrf"]').value as string;
          const body = new URLSearchParams({ csrf, choice: 'ship', comment: text });
          return (await fetch(`/ui/jobs/${jobId}/decisions/approve`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })).status;
        },
        [id, comment] as [string, string],
      );
      expect(status).toBe(200);
    } finally {
      await s.context.close();
    }
    const w = await db.pool.query<{ value: { comment: string } }>('select value from workhorse.job_waits where job_id = $1 and name = $2', [id, 'approve']);
    expect(w.rows[0]!.value.comment).toBe(comment);
  });

  it('refuses a decision without the session\'s CSRF token, and a choice outside the choices or a field given twice with 400', async () => {
    const { id } = await client.enqueue('order.approve', { order: 9 });
    await waitFor(() => waiting(id), Boolean, { what: 'the order to wait for a decision' });
    const s = await session(DECIDE_TOKEN);
    try {
      const { page } = s;
      await page.goto(`${d.url}/ui/decisions`);
      const res = await page.evaluate(async (jobId: string) => {
        const csrf = document.querySelector('input[name="csrf"]').value as string;
        const post = async (body: Record<string, string>) =>
          (await fetch(`/ui/jobs/${jobId}/decisions/approve`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(body) })).status;
        // A field given twice: the first one was recorded without a word.
        const twice = async (body: string) =>
          (await fetch(`/ui/jobs/${jobId}/decisions/approve`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body })).status;
        return {
          noCsrf: await post({ choice: 'ship' }),
          badChoice: await post({ csrf, choice: 'burn' }),
          choiceTwice: await twice(`csrf=${encodeURIComponent(csrf)}&choice=ship&choice=hold`),
          commentTwice: await twice(`csrf=${encodeURIComponent(csrf)}&choice=ship&comment=one&comment=two`),
        };
      }, id);
      expect(res).toEqual({ noCsrf: 403, badChoice: 400, choiceTwice: 400, commentTwice: 400 });
    } finally {
      await s.context.close();
    }
    expect(await waiting(id)).toBe(true);
  });
});
