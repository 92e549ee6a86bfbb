// The tick trap: a tick claims only jobs that can finish in its time, and
// its summary says what it left and why. A job whose timeoutMs is longer
// than the tick's window is counted, not claimed. A job without timeoutMs
// is claimed; if the tick's deadline cuts it off, that run is remembered,
// and ticks without more time than that run leave it (one attempt burnt,
// not one per tick) while a longer tick or a long-lived worker still runs
// it. `workhorse tick` prints a one-line hint when it claimed nothing.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { createClient, runTick, Worker, type Client } from '../../src/index.js';
import { parseTickEnv } from '../../src/tick/env.js';
import skipsApp, { Crunch, Mail } from '../fixtures/skips-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const appModule = fileURLToPath(new URL('../fixtures/skips-app.ts', import.meta.url));
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Mail, Crunch], poolMax: 2 });
});

beforeEach(async () => {
  await db.pool.query('delete from workhorse.job_attempts');
  await db.pool.query('delete from workhorse.jobs');
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

/** One tick of `budgetMs` over the fixture app (1 s safety margin, 200 ms heartbeat). */
const tick = (budgetMs: number, skipsByType = false) =>
  runTick({
    app: skipsApp,
    connectionString: db.url,
    deadline: new Date(Date.now() + budgetMs),
    heartbeatMs: 200,
    scheduleNamespaces: [],
    skipsByType,
  });

describe('the claim rule in SQL', () => {
  it('is fits_tick_v1 in every claim_many_v1 and in count_ready_v1 (a later migration that redefines them must keep it)', async () => {
    const r = await db.pool.query<{ fn: string; uses: boolean }>(
      `select p.proname as fn, position('fits_tick_v1' in pg_get_functiondef(p.oid)) > 0 as uses
         from pg_proc p join pg_namespace n on n.oid = p.pronamespace
        where n.nspname = 'workhorse' and p.proname in ('claim_many_v1', 'count_ready_v1')`,
    );
    expect(r.rows.map((x) => x.fn).sort()).toEqual(['claim_many_v1', 'count_ready_v1']);
    expect(r.rows.every((x) => x.uses)).toBe(true);
  });
});

describe('a tick that cannot finish a job in its time', () => {
  it('leaves a job whose timeoutMs is longer than its window, and counts it, per type on request', async () => {
    const mail = await client.enqueue(Mail, { to: 'ada@example.com' });
    const short = await tick(10_000);
    expect(short).toMatchObject({ claimed: 0, skippedTimeout: 1 });
    expect(short.skippedByType).toBeUndefined();
    expect(await tick(10_000, true)).toMatchObject({
      claimed: 0,
      skippedTimeout: 1,
      skippedByType: { 'skips.mail': { tooLong: 1, cutOff: 0, longestMs: 30_000 } },
    });
    // Left untouched: no attempt, no execution.
    expect(await client.getJob(mail.id)).toMatchObject({ status: 'ready', attempt: 0, execution: 0 });
    // A tick whose window fits the timeout runs it.
    expect(await tick(32_000)).toMatchObject({ claimed: 1, succeeded: 1, skippedTimeout: 0 });
  });

  it('counts nothing skipped for time in a paused queue (no tick claims there, whatever its time)', async () => {
    const mail = await client.enqueue(Mail, { to: 'paused@example.com' });
    await client.admin.pauseQueue('default');
    try {
      expect(await tick(10_000)).toMatchObject({ claimed: 0, skippedTimeout: 0 });
    } finally {
      await client.admin.resumeQueue('default');
    }
    expect(await tick(10_000)).toMatchObject({ claimed: 0, skippedTimeout: 1 });
    expect(await client.getJob(mail.id)).toMatchObject({ status: 'ready', attempt: 0 });
  });

  it('cuts off an untimed job once, then leaves it to ticks with more time than that run and to long-lived workers', async () => {
    const crunch = await client.enqueue(Crunch, { ms: 2500 });
    // 1.5 s window: the job is claimed (no timeoutMs) and cut off at the deadline.
    const first = await tick(2500, true);
    expect(first).toMatchObject({ claimed: 1, retried: 1, skippedTimeout: 0 });
    const cut = await client.getJob(crunch.id);
    expect(cut).toMatchObject({ status: 'ready', attempt: 1 });
    expect(cut?.lastError).toMatchObject({ code: 'tick_deadline' });

    // Ticks of the same size leave it: no attempt burnt per tick.
    for (let i = 0; i < 2; i++) {
      const again = await tick(2500, true);
      expect(again).toMatchObject({ claimed: 0, skippedTimeout: 1 });
      expect(again.skippedByType?.['skips.crunch']).toMatchObject({ tooLong: 0, cutOff: 1 });
      expect(again.skippedByType?.['skips.crunch']?.longestMs).toBeGreaterThanOrEqual(1500);
    }
    expect((await client.getJob(crunch.id))?.attempt).toBe(1);

    // A long-lived worker has no time limit: it claims and finishes it.
    const worker = new Worker(client, { queues: ['default'], concurrency: 1, listen: false });
    worker.handle(Crunch, async (p) => ({ ms: p.ms, by: 'worker' }));
    try {
      expect(await worker.runOnce()).toBe(true);
    } finally {
      await worker.stop();
    }
    expect(await client.getJob(crunch.id)).toMatchObject({ status: 'succeeded', attempt: 2, result: { by: 'worker' } });
  });

  it('claims a cut-off untimed job again in a tick with more time than the cut-off run', async () => {
    const crunch = await client.enqueue(Crunch, { ms: 2000 });
    expect(await tick(2500)).toMatchObject({ claimed: 1, retried: 1 });
    // A short job that was merely claimed late, or a longer tick: 4 s is more than the 2 s run.
    expect(await tick(5000)).toMatchObject({ claimed: 1, succeeded: 1, skippedTimeout: 0 });
    expect(await client.getJob(crunch.id)).toMatchObject({ status: 'succeeded', attempt: 2 });
  });

  it('reports per type when WORKHORSE_SKIPS_BY_TYPE is set (Lambda and POST /tick take it from the environment)', () => {
    expect(parseTickEnv({ WORKHORSE_SKIPS_BY_TYPE: 'true' }).options.skipsByType).toBe(true);
    expect(parseTickEnv({}).options.skipsByType).toBeUndefined();
  });

  it('makes `workhorse tick` print a one-line hint when it claimed nothing, and per-type counts with --skips-by-type', async () => {
    await client.enqueue(Mail, { to: 'ada@example.com' });
    const out: string[] = [];
    const err: string[] = [];
    const io = { out: (l: string) => out.push(l), err: (l: string) => err.push(l) };
    const code = await main(['tick', appModule, '--database-url', db.url, '--budget-ms', '10000'], io);
    expect(code).toBe(0);
    const summary = JSON.parse(out.at(-1)!) as Record<string, unknown>;
    expect(summary).toMatchObject({ claimed: 0, skippedTimeout: 1 });
    expect(summary.skippedByType).toBeUndefined();
    expect(err).toHaveLength(1);
    expect(err[0]).toMatch(/^workhorse tick: claimed nothing: 1 due job\(s\) cannot finish in this tick's time: skips\.mail/);
    expect(err[0]).toContain('--budget-ms');

    out.length = 0;
    err.length = 0;
    await main(['tick', appModule, '--database-url', db.url, '--budget-ms', '10000', '--skips-by-type'], io);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ skippedByType: { 'skips.mail': { tooLong: 1, longestMs: 30_000 } } });

    // Nothing skipped, nothing claimed: no hint.
    await db.pool.query('delete from workhorse.jobs');
    err.length = 0;
    await main(['tick', appModule, '--database-url', db.url, '--budget-ms', '10000'], io);
    expect(err).toEqual([]);
  });
});
