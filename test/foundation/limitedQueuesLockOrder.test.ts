// Two claims of the same two limited queues, tried in opposite orders (a
// worker rotates its queues each claim so none starves). Each claim locks
// a limited queue's row as it reaches it, so one locked qa then waited for
// qb while the other held qb and waited for qa: PostgreSQL broke the
// deadlock after deadlock_timeout by failing one claim. The rows are now
// locked up front in one order. Made deterministic here: a third session
// holds qb while the claim that tries qb first queues behind it, then the
// one that tries qa first. And a queue limited (or resumed) after a claim
// locked its queues is passed over when another claimer holds it, not
// waited for out of order.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, type Client } from '../../src/index.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const A = defineJob({ type: 'lockorder.a', queue: 'lockorder-qa', schema: z.object({}) });
const B = defineJob({ type: 'lockorder.b', queue: 'lockorder-qb', schema: z.object({}) });
const C = defineJob({ type: 'lockorder.c', queue: 'lockorder-qc', schema: z.object({}) });
const D = defineJob({ type: 'lockorder.d', queue: 'lockorder-qd', schema: z.object({}) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [A, B, C, D], poolMax: 2 });
  await client.admin.setQueueLimits('lockorder-qa', { concurrencyLimit: 10 });
  await client.admin.setQueueLimits('lockorder-qb', { rateLimit: 100, ratePeriodMs: 1_000 });
  await client.admin.setQueueLimits('lockorder-qd', { concurrencyLimit: 10 });
  for (const w of ['w-ab', 'w-ba', 'w-cd1', 'w-cd2']) await registerWorkerRow(db.pool, 'default', w, [A.type, B.type, C.type, D.type]);
  await client.enqueueMany([A, B, C, D].flatMap((job) => Array.from({ length: 4 }, () => ({ job, payload: {} }))));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const claimAll = (c: pg.Client, worker: string, queues: string[]) =>
  c.query<{ id: string }>('select id from workhorse.claim_many_v1($1, $2, $3, $4, 10, 60000)', ['default', worker, queues, [A.type, B.type, C.type, D.type]]);

const waitingOnLocks = async () =>
  (await db.pool.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")).rows[0]!.n;

/**
 * While a third session holds `held`'s row, runs `first` (it queues for the
 * row), then `between`, then `second` (it queues too), and releases the row:
 * the rows each claim took, or its error.
 */
async function claimsBehind(
  held: string,
  first: [worker: string, queues: string[]],
  second: [worker: string, queues: string[]],
  between: () => Promise<unknown> = async () => undefined,
): Promise<(number | Error)[]> {
  const sessions = Array.from({ length: 3 }, () => new pg.Client({ connectionString: db.url }));
  await Promise.all(sessions.map((s) => s.connect()));
  const [holder, one, two] = sessions as [pg.Client, pg.Client, pg.Client];
  try {
    await holder.query('begin');
    await holder.query("select 1 from workhorse.queues where namespace = 'default' and name = $1 for update", [held]);
    const a = claimAll(one, ...first).then((r) => r.rows.length, (e: Error) => e);
    await waitFor(waitingOnLocks, (n) => n === 1, { what: 'the first claim to wait' });
    await between();
    const b = claimAll(two, ...second).then((r) => r.rows.length, (e: Error) => e);
    await waitFor(waitingOnLocks, (n) => n === 2, { what: 'the second claim to wait' });
    await holder.query('commit');
    return [await a, await b];
  } finally {
    await Promise.all(sessions.map((s) => s.end()));
  }
}

describe('claims of two limited queues in opposite orders', () => {
  it('take the queues in turn, and neither fails with a deadlock', async () => {
    const got = await claimsBehind('lockorder-qb', ['w-ba', ['lockorder-qb', 'lockorder-qa']], ['w-ab', ['lockorder-qa', 'lockorder-qb']]);
    // Each claim may take all eight jobs (four per queue): between them they took each once.
    expect(got.filter((g) => g instanceof Error)).toEqual([]);
    expect((got as number[]).reduce((a, b) => a + b, 0)).toBe(8);
  }, 30_000);

  it('pass over a queue limited since the claim locked its queues, rather than wait for it out of order', async () => {
    // The first claim finds only qd limited, and waits for it; then qc is
    // limited, and the second claim locks it, then waits for qd.
    const got = await claimsBehind('lockorder-qd', ['w-cd1', ['lockorder-qc', 'lockorder-qd']], ['w-cd2', ['lockorder-qc', 'lockorder-qd']], () =>
      client.admin.setQueueLimits('lockorder-qc', { concurrencyLimit: 10 }),
    );
    expect(got.filter((g) => g instanceof Error)).toEqual([]);
    expect((got as number[]).reduce((a, b) => a + b, 0)).toBe(8);
  }, 30_000);
});
