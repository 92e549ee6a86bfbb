// The same tick through a real PgBouncer in transaction pooling mode, with
// fewer server connections than client connections: registration, the
// recovery pass, slot claiming and firing, heartbeats, settlement and
// deregistration all work without any session state.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineSchedule, Schedules, type Client } from '../../src/index.js';
import * as protocol from '../../src/db/protocol.js';
import { NoopJob, SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, registerWorkerRow, serverUrl, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { startPgBouncer, type Bouncer } from './startPgBouncer.js';
import { backdateSlot, fixtureApp, freshHandler, jobStatuses, lambdaContext, scheduledEvent } from './support.js';

let db: TestDatabase;
let client: Client;
let bouncer: Bouncer;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob, NoopJob], poolMax: 2 });
  // Two server connections for everything that goes through the bouncer.
  bouncer = await startPgBouncer(serverUrl(), 2);
});

afterAll(async () => {
  await bouncer?.stop();
  await client.close();
  await db.drop();
});

describe('a tick through PgBouncer (transaction pooling)', () => {
  it('runs in transaction pooling mode', async () => {
    const admin = new pg.Client({ connectionString: bouncer.adminUrl });
    await admin.connect();
    const config = await admin.query<{ key: string; value: string }>('SHOW CONFIG');
    await admin.end();
    expect(config.rows.find((r) => r.key === 'pool_mode')?.value).toBe('transaction');
  });

  it('recovers an expired lease, fires a due slot, and runs, heartbeats and settles jobs; two ticks at once share 2 server connections', async () => {
    // A job leased by a worker that died: its lease has already expired.
    const orphan = await client.enqueue(SleepJob, { ms: 10 });
    await registerWorkerRow(db.pool, 'default', 'ghost');
    const claimed = await protocol.claimMany(db.pool, 'default', {
      workerId: 'ghost',
      queues: ['default'],
      types: ['tick.sleep'],
      limit: 1,
      leaseMs: 1,
    });
    expect(claimed.map((j) => j.id)).toEqual([orphan.id]);
    await sleep(20);
    // A due slot and some work that outlasts a heartbeat.
    await new Schedules(client).define(defineSchedule({ name: 'bouncer.hourly', job: NoopJob, everyMs: 3_600_000 }));
    await backdateSlot(db.pool, 'bouncer.hourly', 5);
    // Each runs 1.2 s, longer than its 800 ms lease (4 heartbeats of 200 ms):
    // only heartbeats through the bouncer keep it from being recovered.
    await client.enqueueMany(Array.from({ length: 8 }, () => ({ job: SleepJob, payload: { ms: 1200 }, options: { timeoutMs: 3000 } })));

    const handler = await freshHandler({
      DATABASE_URL: bouncer.url(db.url),
      WORKHORSE_APP: fixtureApp,
      WORKHORSE_HEARTBEAT_MS: '200',
      WORKHORSE_CONCURRENCY: '4',
    });
    // Watch the leases: a heartbeat moves expires_at past claimed_at + 800 ms.
    let longestLeaseMs = 0;
    const probe = setInterval(() => {
      void db.pool
        .query<{ ms: number | null }>(
          'select (extract(epoch from max(expires_at - claimed_at)) * 1000)::int as ms from workhorse.job_runtime where worker_id <> $1',
          ['ghost'],
        )
        .then((r) => (longestLeaseMs = Math.max(longestLeaseMs, r.rows[0]?.ms ?? 0)));
    }, 50);
    const [a, b] = await Promise.all([handler(scheduledEvent(), lambdaContext(8000)), handler(scheduledEvent(), lambdaContext(8000))]);
    clearInterval(probe);
    expect(longestLeaseMs).toBeGreaterThan(800);

    expect(a.recovered + b.recovered).toBe(1);
    expect(a.slotsFired + b.slotsFired).toBe(1);
    expect(a.claimed + b.claimed).toBe(10);
    expect(a.succeeded + b.succeeded).toBe(10);
    expect(a.failed + b.failed + a.retried + b.retried).toBe(0);
    expect(await jobStatuses(db.pool)).toEqual({ succeeded: 10 });
    expect((await client.getJob(orphan.id))?.attempt).toBe(2);
    const registry = await db.pool.query("select id from workhorse.worker_registry where kind = 'tick'");
    expect(registry.rows).toEqual([]);
    // Heartbeats went through too: no lease but the orphan's was ever recovered.
    const ledger = await db.pool.query<{ outcome: string; n: number }>(
      'select outcome, count(*)::int as n from workhorse.job_attempts group by outcome order by outcome',
    );
    // The orphan's lease was recovered and it succeeded at its second attempt;
    // the nine first-attempt successes are held by their job rows alone.
    expect(ledger.rows).toEqual([
      { outcome: 'recovered', n: 1 },
      { outcome: 'succeeded', n: 1 },
    ]);
    // Nothing is left open on the server side of the bouncer.
    const open = await waitFor(
      async () =>
        (
          await db.pool.query(
            `select pid from pg_stat_activity where datname = current_database() and state like 'idle in transaction%'`,
          )
        ).rowCount,
      (n) => n === 0,
      { timeoutMs: 5000, what: 'no idle-in-transaction sessions' },
    );
    expect(open).toBe(0);
  });
});
