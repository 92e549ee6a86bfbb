// Two workers given one workerId (replicas started from one config). The
// first to stop used to expire every lease under that id at its
// deregistration, the other's running jobs included, so the next recovery
// pass ran them a second time while they still ran. Now a deregistration
// expires only the leases the stopping worker itself still holds.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Hold = defineJob({ type: 'shared.hold', schema: z.object({ n: z.number() }) });
/** A heartbeat this long never fires during a test: leases change only by what the test does. */
const HEARTBEAT_MS = 60_000;

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Hold], poolMax: 6 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ hard: true })));
  await db.pool.query('delete from workhorse.job_runtime');
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

interface Gate {
  entered: number;
  release: () => void;
  released: Promise<void>;
}

function gate(): Gate {
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  return { entered: 0, release, released };
}

function startWorker(id: string, g: Gate, ignoreAbort = false): Worker {
  const w = new Worker(client, { workerId: id, heartbeatMs: HEARTBEAT_MS, pollMs: 50, concurrency: 1 });
  w.handle(Hold, async ({ n }, ctx) => {
    g.entered++;
    await (ignoreAbort ? g.released : Promise.race([g.released, new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)))]));
    return { n };
  });
  workers.push(w);
  void w.run();
  return w;
}

async function leaseOf(id: string): Promise<{ expired: boolean } | undefined> {
  const r = await db.pool.query<{ expired: boolean }>('select expires_at <= now() as expired from workhorse.job_runtime where job_id = $1', [id]);
  return r.rows[0];
}

async function recover(): Promise<number> {
  return (await db.pool.query<{ n: number }>("select workhorse.recover_expired_v1('default', 100) as n")).rows[0]!.n;
}

describe('two workers sharing one workerId', () => {
  it("the first to stop leaves the other's running job leased: no recovery, one run, succeeded", async () => {
    const running = gate();
    const other = startWorker('replica', running);
    const { id } = await client.enqueue(Hold, { n: 1 });
    await waitFor(() => running.entered, (n) => n === 1, { what: 'the job to start' });

    const idle = startWorker('replica', gate());
    await waitFor(async () => (await db.pool.query("select 1 from workhorse.worker_registry where id = 'replica'")).rowCount, (n) => n === 1);
    await idle.stop();

    expect(await leaseOf(id)).toEqual({ expired: false });
    expect(await recover()).toBe(0);

    running.release();
    await waitFor(async () => (await client.getJob(id))?.status, (s) => s === 'succeeded', { what: 'the job to succeed' });
    const job = await client.getJob(id);
    expect(job).toMatchObject({ status: 'succeeded', attempt: 1, result: { n: 1 } });
    expect(running.entered).toBe(1);
    await other.stop();
  });

  it("still expires the stopping worker's own lease whose settlement gave up, at once, for recovery", async () => {
    // complete_many_v1 refuses every completion (a real PostgreSQL error, not a fault: the write gives up).
    const signature = 'workhorse.complete_many_v1(text,bigint[],bigint[],jsonb[])';
    const original = (await db.pool.query<{ sql: string }>('select pg_get_functiondef($1::regprocedure) as sql', [signature])).rows[0]!.sql;
    await db.pool.query(
      `create or replace function workhorse.complete_many_v1(p_namespace text, p_job_ids bigint[], p_executions bigint[], p_results jsonb[]) returns setof bigint
         language plpgsql as $$ begin raise exception 'completions are broken for this test'; end $$`,
    );
    try {
      const done = gate();
      done.release();
      const errors: unknown[] = [];
      const w = startWorker('alone', done);
      w.events.on('error', (e) => errors.push(e));
      const { id } = await client.enqueue(Hold, { n: 2 });
      await waitFor(() => errors.length, (n) => n > 0, { what: 'the completion to give up' });
      expect(await leaseOf(id)).toEqual({ expired: false });
      await w.stop();

      expect(await leaseOf(id)).toEqual({ expired: true });
      expect(await recover()).toBe(1);
    } finally {
      await db.pool.query(original);
    }
  });
});

describe('deregister_worker_v2', () => {
  it('refuses held arrays of different lengths with WH422', async () => {
    const err = await db.pool
      .query("select workhorse.deregister_worker_v2('default', 'x', '{}', '{1,2}', '{1}')")
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'WH422' });
  });
});
