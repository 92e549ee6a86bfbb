// The dashboard's reads (sql/protocol/dashboard.sql through
// src/db/dashboard.ts) against a real database: pages of the namespace
// table with their cursors and bounded windows, leases and recovery notes,
// one job's lease, ledger and steps, a waiting row's wait, a job's parent
// and children, queue depth, throughput per minute,
// the backlog over the last hour and the registry's heartbeat ages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import * as dash from '../../src/db/dashboard.js';
import * as protocol from '../../src/db/protocol.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { sleep } from '../helpers/wait.js';
import testApp from '../http/fixtures/app.js';

let db: TestDatabase;
let client: Client;
const NS = 'default';
const page = (f: Partial<dash.DashboardJobFilter> = {}) => dash.dashboardJobs(db.pool, NS, { limit: 50, span: 10_000, ...f });

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: testApp.jobs, poolMax: 4 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function enqueueMany(n: number, type = 'report.build', extra: object = {}): Promise<string[]> {
  const items = Array.from({ length: n }, (_, i) =>
    type === 'report.build'
      ? { job: 'report.build', payload: { account: `a${i}`, rows: i % 100 }, options: extra }
      : { job: 'email.send', payload: { to: `u${i}@example.com`, subject: 's' }, options: extra },
  );
  return (await client.enqueueMany(items as never)).map((r) => r.id);
}

describe('the namespace table', () => {
  it('pages newest first with a cursor, never more than the limit, and ends with a null cursor', async () => {
    const ids = await enqueueMany(120);
    await client.enqueue('email.send', { to: 'x@example.com', subject: 's' });
    await createClient({ connectionString: db.url, namespace: 'elsewhere', jobs: testApp.jobs }).enqueue('report.build', { account: 'z', rows: 1 });
    const seen: string[] = [];
    let before: string | undefined;
    for (;;) {
      const p = await page({ type: 'report.build', beforeId: before });
      expect(p.jobs.length).toBeLessThanOrEqual(50);
      seen.push(...p.jobs.map((j) => j.id));
      if (!p.nextBeforeId) break;
      before = p.nextBeforeId;
    }
    expect(seen).toEqual([...ids].reverse());
    // A full last page has no cursor: no link to an empty page.
    for (const f of [{}, { status: 'ready' as const }]) {
      const whole = await page({ ...f, type: 'report.build', limit: 120 });
      expect(whole.jobs).toHaveLength(120);
      expect(whole.nextBeforeId).toBeNull();
      const last = await page({ ...f, type: 'report.build', limit: 20, beforeId: seen[99] });
      expect(last.jobs.map((j) => j.id)).toEqual(seen.slice(100));
      expect(last.nextBeforeId).toBeNull();
    }
    const first = await page({ limit: 3 });
    expect(first.jobs.map((j) => j.type)).toEqual(['email.send', 'report.build', 'report.build']);
    expect(first.jobs[0]).toMatchObject({ queue: 'default', status: 'ready', execution: 0, attempt: 0, maxAttempts: 3, leasedBy: null, leaseExpiresInMs: null, recoveredFrom: null });
    expect(first.asOf).toBeInstanceOf(Date);
  });

  it('offers no older window in a namespace with no job, however many jobs other namespaces hold', async () => {
    const empty = await dash.dashboardJobs(db.pool, 'nothing-here', { limit: 50, span: 10 });
    expect(empty).toMatchObject({ jobs: [], nextBeforeId: null, searchedDownTo: null });
    const succeeded = await dash.dashboardJobs(db.pool, 'nothing-here', { limit: 50, span: 10, status: 'succeeded', beforeId: '100' });
    expect(succeeded).toMatchObject({ jobs: [], nextBeforeId: null, searchedDownTo: null });
  });

  it('searches a bounded window of ids per page, so a sparse filter walks back window by window', async () => {
    const p1 = await page({ type: 'email.send', span: 30 });
    expect(p1.jobs.map((j) => j.type)).toEqual(['email.send']);
    // No cursor: the window ends at the table's newest id (another namespace's job here).
    const top = Number((await db.pool.query<{ top: string }>('select max(id) + 1 as top from workhorse.jobs')).rows[0]!.top);
    expect(top).toBeGreaterThan(Number(p1.jobs[0]!.id) + 1);
    expect(p1.searchedDownTo).toBe(String(top - 30));
    expect(p1.nextBeforeId).toBe(String(top - 30));
    let before: string | null = p1.nextBeforeId;
    let windows = 1;
    while (before) {
      const p = await page({ type: 'email.send', span: 30, beforeId: before });
      expect(p.jobs).toEqual([]);
      before = p.nextBeforeId;
      windows++;
    }
    expect(windows).toBe(Math.ceil((top - 1) / 30));
  });

  it('crosses a gap in the ids wider than the window in one page, and says truthfully what it searched', async () => {
    const gapDb = await createTestDatabase();
    const c = createClient({ connectionString: gapDb.url, jobs: testApp.jobs, poolMax: 2 });
    try {
      const { id: old } = await c.enqueue('email.send', { to: 'old@example.com', subject: 's' }, { queue: 'gapq' });
      // Retention deleting many finished jobs (or a bumped sequence) leaves millions of ids unused.
      await gapDb.pool.query(`select setval('workhorse.jobs_id_seq', (select max(id) from workhorse.jobs) + 5000000)`);
      const { id: recent } = await c.enqueue('email.send', { to: 'new@example.com', subject: 's' }, { queue: 'other' });
      const gapPage = (f: Partial<dash.DashboardJobFilter>) => dash.dashboardJobs(gapDb.pool, NS, { limit: 50, span: 10_000, ...f });
      for (const f of [{ queue: 'gapq' }, {}, { type: 'email.send' }]) {
        const p1 = await gapPage(f);
        expect(p1.searchedDownTo).toBe(String(BigInt(recent) + 1n - 10_000n));
        // The next window starts at the newest job below this one, not 10,000 ids lower.
        expect(p1.nextBeforeId).toBe(String(BigInt(old) + 1n));
        const p2 = await gapPage({ ...f, beforeId: p1.nextBeforeId! });
        expect(p2.jobs.map((j) => j.id)).toEqual([old]);
        expect(p2.nextBeforeId).toBeNull();
      }
      const succeeded = await gapPage({ status: 'succeeded' });
      expect(succeeded.nextBeforeId).toBe(String(BigInt(old) + 1n));
    } finally {
      await c.close();
      await gapDb.drop();
    }
  });

  it('walks only the rows of a status, with the lease of a running job and the key in its row', async () => {
    await registerWorkerRow(db.pool, NS, 'w-dash', ['email.send']);
    const { id } = await client.enqueue('email.send', { to: 'k@example.com', subject: 's' }, { queue: 'lease', concurrencyKey: 'tenant:7' });
    const claimed = await protocol.claimMany(db.pool, NS, { workerId: 'w-dash', queues: ['lease'], types: ['email.send'], limit: 1, leaseMs: 60_000 });
    expect(claimed.map((c) => c.id)).toEqual([id]);
    const running = await page({ status: 'running' });
    expect(running.jobs).toHaveLength(1);
    expect(running.jobs[0]).toMatchObject({ id, status: 'running', queue: 'lease', leasedBy: 'w-dash', leaseStarted: true, execution: 1, attempt: 1, concurrencyKey: 'tenant:7' });
    expect(running.jobs[0]!.leaseExpiresInMs).toBeGreaterThan(55_000);
    expect(running.searchedDownTo).toBeNull();
    expect((await page({ status: 'running', queue: 'default' })).jobs).toEqual([]);
    expect((await page({ status: 'ready', queue: 'lease' })).jobs).toEqual([]);
    const { id: second } = await client.enqueue('email.send', { to: 'k2@example.com', subject: 's' }, { queue: 'lease', concurrencyKey: 'tenant:7' });
    expect((await page({ status: 'ready', queue: 'lease' })).jobs).toEqual([expect.objectContaining({ id: second, concurrencyKey: 'tenant:7', gateHeldBy: id })]);
    expect((await page({ status: 'running' })).jobs[0]!.gateHeldBy).toBeNull();
    const ready = await page({ status: 'ready', queue: 'reports', limit: 500 });
    expect(ready.jobs).toHaveLength(120);
    expect(ready.jobs.every((j) => j.status === 'ready' && j.queue === 'reports')).toBe(true);
  });

  it('names the worker the recovery pass took a job from', async () => {
    const { id } = await client.enqueue('email.send', { to: 'r@example.com', subject: 's' }, { queue: 'recover' });
    await registerWorkerRow(db.pool, NS, 'w-crashed', ['email.send']);
    const claimed = await protocol.claimMany(db.pool, NS, { workerId: 'w-crashed', queues: ['recover'], types: ['email.send'], limit: 1, leaseMs: 20 });
    expect(claimed[0]!.id).toBe(id);
    await sleep(50);
    expect(await protocol.recoverExpired(db.pool, NS, 10)).toBeGreaterThanOrEqual(1);
    const row = (await page({ status: 'ready', limit: 500 })).jobs.find((j) => j.id === id)!;
    expect(row).toMatchObject({ recoveredFrom: 'w-crashed', execution: 1, leasedBy: null, errorMessage: 'lease expired: worker w-crashed did not renew it in time (it stopped or crashed, or its heartbeats did not reach the database)' });
    const ledger = await dash.jobAttempts(db.pool, NS, id);
    expect(ledger).toEqual([expect.objectContaining({ execution: 1, attempt: 1, workerId: 'w-crashed', outcome: 'recovered' })]);
    expect(await dash.jobAttempts(db.pool, 'elsewhere', id)).toEqual([]);
  });

  it('refuses a limit outside 1..500 and an unknown status with SQLSTATE 22023', async () => {
    await expect(page({ limit: 0 })).rejects.toMatchObject({ code: '22023' });
    await expect(page({ limit: 501 })).rejects.toMatchObject({ code: '22023' });
    await expect(page({ status: 'bogus' as never })).rejects.toMatchObject({ code: '22023' });
  });
});

describe('one job', () => {
  it('reads its lease, attempts ledger and recorded steps, and nothing of another namespace', async () => {
    const { id } = await client.enqueue('report.build', { account: 'steps', rows: 2 }, { queue: 'steps' });
    const worker = new Worker(client, { queues: ['steps'], listen: false, workerId: 'w-steps' }).handle('report.build', async (payload, ctx) => {
      await ctx.step('load', () => ({ rows: (payload as { rows: number }).rows }));
      expect(await dash.jobLease(db.pool, NS, ctx.job.id)).toMatchObject({ workerId: 'w-steps', execution: 1, started: true });
      return 'built';
    });
    expect(await worker.runOnce()).toBe(true);
    await worker.stop();
    expect(await dash.jobLease(db.pool, NS, id)).toBeNull();
    expect(await dash.jobSteps(db.pool, NS, id)).toEqual([{ name: 'load', result: { rows: 2 }, execution: 1, createdAt: expect.any(Date) }]);
    const [a] = await dash.jobAttempts(db.pool, NS, id);
    expect(a).toMatchObject({ execution: 1, attempt: 1, workerId: 'w-steps', outcome: 'succeeded', error: null });
    expect(a!.durationMs).toBeGreaterThanOrEqual(0);
    expect(await dash.jobSteps(db.pool, 'elsewhere', id)).toEqual([]);
  });
});

describe('durable waits and families', () => {
  it('reads a parent\'s children by name (at most the limit) and a child\'s parent, and nothing of another namespace', async () => {
    const { id } = await client.enqueue('report.build', { account: 'family', rows: 1 }, { queue: 'family' });
    const worker = new Worker(client, { queues: ['family'], listen: false, workerId: 'w-family' }).handle('report.build', async (_p, ctx) => {
      const b = await ctx.spawn('b-mail', 'email.send', { to: 'b@example.com', subject: 'b' }, { queue: 'family-kids' });
      const a = await ctx.spawn('a-mail', 'email.send', { to: 'a@example.com', subject: 'a' }, { queue: 'family-kids', detached: true });
      return ctx.join('kids', [a, b]);
    });
    await worker.runOnce();
    await worker.stop();
    const family = await dash.jobFamily(db.pool, NS, id, 100);
    expect(family.parent).toBeNull();
    expect(family.children).toEqual([
      { name: 'a-mail', jobId: expect.any(String), type: 'email.send', status: 'ready', detached: true },
      { name: 'b-mail', jobId: expect.any(String), type: 'email.send', status: 'ready', detached: false },
    ]);
    expect((await dash.jobFamily(db.pool, NS, id, 1)).children.map((c) => c.name)).toEqual(['a-mail']);
    const child = family.children[1]!.jobId;
    expect(await dash.jobFamily(db.pool, NS, child, 100)).toEqual({
      parent: { name: 'b-mail', jobId: id, type: 'report.build', status: 'waiting', detached: false },
      children: [],
    });
    expect(await dash.jobFamily(db.pool, 'elsewhere', id, 100)).toEqual({ parent: null, children: [] });
    // The table row of the waiting parent says what it waits for; its children's rows say nothing.
    const rows = (await page({ status: 'waiting', queue: 'family' })).jobs;
    expect(rows.map((r) => [r.id, r.wait])).toEqual([[id, { kind: 'join', name: 'kids', key: null, wakeInMs: null, others: 0 }]]);
    expect((await page({ queue: 'family-kids' })).jobs.map((r) => r.wait)).toEqual([null, null]);
  });

  it('gives a sleeping row its wake time against the database clock, and a signal wait its key', async () => {
    const ids = [(await client.enqueue('report.build', { account: 'nap', rows: 1 }, { queue: 'napping' })).id, (await client.enqueue('report.build', { account: 'sig', rows: 2 }, { queue: 'napping' })).id];
    const worker = new Worker(client, { queues: ['napping'], listen: false, workerId: 'w-nap' }).handle('report.build', async (p, ctx) => {
      if ((p as { account: string }).account === 'nap') await ctx.sleep('nap', 120_000);
      else await ctx.waitForSignal('paid', { key: 'order-9', timeoutMs: 60_000 });
      return 'done';
    });
    await worker.runOnce();
    await worker.runOnce();
    await worker.stop();
    const rows = new Map((await page({ status: 'waiting', queue: 'napping' })).jobs.map((r) => [r.id, r.wait]));
    const nap = rows.get(ids[0]!)!;
    expect(nap).toMatchObject({ kind: 'sleep', name: 'nap', key: null });
    expect(nap.wakeInMs).toBeGreaterThan(100_000);
    expect(nap.wakeInMs).toBeLessThanOrEqual(120_000);
    const sig = rows.get(ids[1]!)!;
    expect(sig).toMatchObject({ kind: 'signal', name: 'paid', key: 'order-9' });
    expect(sig.wakeInMs).toBeGreaterThan(40_000);
    expect(sig.wakeInMs).toBeLessThanOrEqual(60_000);
  });
});

describe('queues and the last hour', () => {
  it('counts due and scheduled ready jobs, the oldest due age, failed and cancelled', async () => {
    const { id: later } = await client.enqueue('report.build', { account: 'later', rows: 1 }, { queue: 'depth', delayMs: 3_600_000 });
    await client.enqueue('report.build', { account: 'now', rows: 1 }, { queue: 'depth' });
    const { id: gone } = await client.enqueue('report.build', { account: 'gone', rows: 1 }, { queue: 'depth' });
    await client.cancel(gone);
    await db.pool.query(`update workhorse.jobs set run_at = now() - interval '90 seconds' where queue = 'depth' and status = 'ready' and id <> $1`, [later]);
    const depth = (await dash.queueDepth(db.pool, NS)).find((q) => q.queue === 'depth')!;
    expect(depth).toMatchObject({ due: 1, scheduled: 1, failed: 0, cancelled: 1 });
    expect(depth.oldestDueMs).toBeGreaterThanOrEqual(90_000);
    expect(depth.oldestDueMs).toBeLessThan(120_000);
  });

  it('counts attempts per minute and outcome from the ledger, and only the last hour', async () => {
    const ids = await enqueueMany(3, 'report.build', { queue: 'tp' });
    await db.pool.query(
      `insert into workhorse.job_attempts (job_id, execution, attempt, namespace, worker_id, outcome, finished_at)
       select id, 1, 1, 'default', 'w', 'succeeded', now() - interval '5 minutes' from unnest($1::bigint[]) id
       union all select $2, 2, 2, 'default', 'w', 'failed', now() - interval '5 minutes'
       union all select $2, 3, 3, 'default', 'w', 'succeeded', now() - interval '2 hours'`,
      [ids, ids[0]],
    );
    const tp = (await dash.throughput(db.pool, NS, 60)).filter((p) => p.queue === 'tp');
    expect(tp.map((p) => [p.outcome, p.attempts])).toEqual([
      ['failed', 1],
      ['succeeded', 3],
    ]);
    expect(Date.now() - tp[0]!.minute.getTime()).toBeGreaterThanOrEqual(5 * 60_000 - 60_000);
  });

  it('draws the backlog at the end of every minute, ending at the queue\'s ready + running + waiting', async () => {
    const [a, b] = await enqueueMany(2, 'report.build', { queue: 'bl' });
    await enqueueMany(1, 'report.build', { queue: 'bl' });
    await db.pool.query(`update workhorse.jobs set created_at = now() - interval '30 minutes' where id = $1`, [a]);
    await db.pool.query(
      `update workhorse.jobs set created_at = now() - interval '20 minutes', status = 'succeeded', finished_at = now() - interval '10 minutes' where id = $1`,
      [b],
    );
    const points = (await dash.backlog(db.pool, NS, 60)).filter((p) => p.queue === 'bl');
    expect(points).toHaveLength(60);
    const at = (minutesAgo: number) => points[59 - minutesAgo]!.outstanding;
    expect(at(45)).toBe(0);
    expect(at(25)).toBe(1);
    expect(at(15)).toBe(2);
    expect(at(5)).toBe(1);
    const q = (await client.admin.listQueues()).find((x) => x.name === 'bl')!;
    expect(points[59]!.outstanding).toBe(q.ready + q.running + q.waiting);
    expect(points[59]!.outstanding).toBe(2);
    expect(Math.abs(points[59]!.at.getTime() - Date.now())).toBeLessThan(5_000);
  });

  it('reports each registered worker\'s heartbeat age on the database clock and the leases it holds', async () => {
    await db.pool.query(`update workhorse.worker_registry set last_seen = now() - interval '42 seconds' where id = 'w-dash'`);
    const ages = new Map((await dash.workerAges(db.pool, NS)).map((w) => [w.id, w]));
    expect(ages.get('w-dash')!.leases).toBe(1);
    expect(ages.get('w-dash')!.heartbeatAgeMs).toBeGreaterThanOrEqual(42_000);
    expect(ages.get('w-dash')!.heartbeatAgeMs).toBeLessThan(50_000);
    expect(ages.get('w-crashed')?.leases ?? 0).toBe(0);
  });
});
