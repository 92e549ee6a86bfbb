// A tick within its time limit: it claims only jobs whose timeout fits the
// time left, runs and settles them, aborts stragglers before the deadline,
// returns in time with a correct summary, and leaves nothing behind: no
// registry row, no connection, no open transaction.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { TICK_APPLICATION_NAME } from '../../src/tick/runTick.js';
import { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { fixtureApp, freshHandler, jobStatuses, lambdaContext, scheduledEvent } from './support.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob], poolMax: 2 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

const env = () => ({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp, WORKHORSE_HEARTBEAT_MS: '500' });

describe('a tick with a 3 s budget', () => {
  it('claims, runs and settles the jobs that fit, skips a job whose timeout exceeds the time left, and returns before its deadline', async () => {
    const fits = await Promise.all(
      [1, 2, 3, 4].map(() => client.enqueue(SleepJob, { ms: 200 }, { timeoutMs: 1000 })),
    );
    const failing = await client.enqueue(SleepJob, { ms: 50, fail: true }, { timeoutMs: 1000 });
    const tooLong = await client.enqueue(SleepJob, { ms: 10 }, { timeoutMs: 5000 });

    const handler = await freshHandler(env());
    const context = lambdaContext(3000);
    const summary = await handler(scheduledEvent(), context);
    const returnedAt = Date.now();

    expect(returnedAt).toBeLessThan(context.deadline);
    expect(summary.msLeft).toBeGreaterThan(0);
    expect(summary).toMatchObject({ claimed: 5, succeeded: 4, retried: 1, failed: 0, recovered: 0, slotsFired: 0, fannedOut: 0 });

    for (const { id } of fits) {
      const job = await client.getJob(id);
      expect(job?.status).toBe('succeeded');
      // Handlers see the tick's deadline through ctx.remainingMs().
      const left = (job!.result as { remainingMs: number }).remainingMs;
      expect(left).toBeGreaterThan(0);
      expect(left).toBeLessThan(3000);
    }
    expect((await client.getJob(failing.id))?.status).toBe('ready');
    const skipped = await client.getJob(tooLong.id);
    expect(skipped?.status).toBe('ready');
    expect(skipped?.attempt).toBe(0);
    expect(skipped?.execution).toBe(0);
    await db.pool.query('delete from workhorse.jobs');
  });

  it('aborts a handler still running at the hard deadline, settles it as a retry and still returns in time', async () => {
    // No timeout: claimable by any tick, and it would run for an hour.
    const straggler = await client.enqueue(SleepJob, { ms: 3_600_000 });
    const handler = await freshHandler(env());
    const context = lambdaContext(3000);
    const summary = await handler(scheduledEvent(), context);

    expect(Date.now()).toBeLessThan(context.deadline);
    expect(summary).toMatchObject({ claimed: 1, succeeded: 0, retried: 1 });
    const job = await client.getJob(straggler.id);
    expect(job?.status).toBe('ready');
    expect(job?.lastError).toMatchObject({ name: 'TickDeadlineError', code: 'tick_deadline' });
    const leases = await db.pool.query('select 1 from workhorse.job_runtime');
    expect(leases.rowCount).toBe(0);
    await db.pool.query('delete from workhorse.jobs');
  });

  it('leaves no registry row, no connection and no open transaction once it returns', async () => {
    await Promise.all([1, 2, 3].map(() => client.enqueue(SleepJob, { ms: 100 }, { timeoutMs: 1000 })));
    const handler = await freshHandler(env());
    const context = lambdaContext(3000);

    const seenDuring: string[] = [];
    const probe = setInterval(() => {
      void db.pool
        .query<{ id: string }>("select id from workhorse.worker_registry where kind = 'tick'")
        .then((r) => seenDuring.push(...r.rows.map((x) => x.id)));
    }, 20);
    const summary = await handler(scheduledEvent(), context);
    clearInterval(probe);

    expect(summary.succeeded).toBe(3);
    // It was registered (as a tick, with this invocation's request id) while it ran...
    expect(seenDuring.some((id) => id.includes(context.awsRequestId!))).toBe(true);
    // ...and is gone now.
    const registry = await db.pool.query("select id from workhorse.worker_registry where kind = 'tick'");
    expect(registry.rows).toEqual([]);
    // The tick closed its pool; a backend leaves pg_stat_activity a moment
    // after its client said goodbye, so allow it that moment.
    const sessions = await waitFor(
      async () =>
        (
          await db.pool.query<{ pid: number; state: string; application_name: string }>(
            `select pid, state, application_name from pg_stat_activity
              where datname = current_database() and pid <> pg_backend_pid()
                and (application_name = $1 or state like 'idle in transaction%')`,
            [TICK_APPLICATION_NAME],
          )
        ).rows,
      (rows) => rows.length === 0,
      { timeoutMs: 5000, what: "the tick's connections to disappear from pg_stat_activity" },
    );
    expect(sessions).toEqual([]);
    expect(await jobStatuses(db.pool)).toEqual({ succeeded: 3 });
  });
});
