// Foundation (3): the fence. Once a lease has been recovered and the job
// re-claimed by another worker, every write the old owner makes — progress,
// step, transactional step, complete, fail, heartbeat — is refused with a
// typed error and changes nothing, and the old handler's AbortSignal fires.
import { once } from 'node:events';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import * as protocol from '../../src/db/protocol.js';
import { StaleLeaseError } from '../../src/errors.js';
import type { HandlerContext } from '../../src/worker/context.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { latch, type Latch } from './support/latch.js';
import { attemptsOf } from './support/rows.js';

const FxFence = defineJob({ type: 'fx.fence', schema: z.object({ n: z.number() }), retry: { maxAttempts: 5 } });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query('create table fx_side (job_id bigint, note text)');
  client = createClient({ connectionString: db.url, poolMax: 8, jobs: [FxFence] });
});

beforeEach(async () => {
  await db.pool.query('truncate workhorse.jobs, workhorse.job_runtime, workhorse.job_steps, workhorse.job_attempts, fx_side');
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ hard: true })));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

interface Owner {
  worker: Worker;
  ctx: Promise<HandlerContext>;
  release: Latch;
  /** What the handler returns (or throws) once released. */
  outcome: { value?: unknown; throws?: Error };
  run: Promise<boolean>;
}

/**
 * A worker whose heartbeat timer never fires during a test (heartbeat 60 s):
 * the test drives its heartbeat by hand. Its handler reports its context and
 * waits until released (or aborted).
 */
function owner(id: string): Owner {
  const worker = new Worker(client, { workerId: id, heartbeatMs: 60_000, listen: false, concurrency: 1 });
  workers.push(worker);
  const release = latch();
  let gotCtx!: (c: HandlerContext) => void;
  const ctx = new Promise<HandlerContext>((r) => (gotCtx = r));
  const outcome: Owner['outcome'] = { value: { by: id } };
  worker.handle('fx.fence', async (_p, c) => {
    gotCtx(c);
    await release.promise;
    if (outcome.throws) throw outcome.throws;
    return outcome.value;
  });
  return { worker, ctx, release, outcome, run: worker.runOnce() };
}

/** Simulates a lost lease: expire it in SQL, then run a recovery pass. */
async function loseLease(jobId: string): Promise<void> {
  await db.pool.query(`update workhorse.job_runtime set expires_at = now() - interval '1 second' where job_id = $1`, [jobId]);
  expect(await client.admin.recoverExpired()).toBe(1);
}

async function snapshot(jobId: string) {
  // The job as the protocol reports it (running while leased); executions read as numbers (the last column wins).
  const job = await db.pool.query(
    `select s.*, s.execution::int as execution from workhorse.jobs j left join workhorse.job_runtime l on l.job_id = j.id,
            lateral workhorse.job_as_seen_v1(j, l) s where j.id = $1`,
    [jobId],
  );
  const lease = await db.pool.query('select *, execution::int as execution from workhorse.job_runtime where job_id = $1', [jobId]);
  const steps = await db.pool.query('select *, execution::int as execution from workhorse.job_steps where job_id = $1', [jobId]);
  const side = await db.pool.query('select * from fx_side');
  return { job: job.rows, lease: lease.rows, steps: steps.rows, side: side.rows, attempts: await attemptsOf(db.pool, jobId) };
}

/** Old owner A claims the job, loses its lease, new owner B re-claims it. */
async function staleSetup() {
  const { id } = await client.enqueue(FxFence, { n: 1 });
  const a = owner('worker-a');
  const ctxA = await a.ctx;
  expect(ctxA.job.execution).toBe(1);
  await loseLease(id);
  const b = owner('worker-b');
  const ctxB = await b.ctx;
  expect(ctxB.job).toMatchObject({ id, execution: 2, attempt: 2 });
  return { id, a, ctxA, b, ctxB };
}

describe('fencing a stale owner', () => {
  it("refuses the old owner's progress, step and transactional step with StaleLeaseError and writes nothing", async () => {
    const { id, ctxA, b } = await staleSetup();
    const before = await snapshot(id);
    expect(before.lease).toMatchObject([{ worker_id: 'worker-b', execution: 2 }]);

    await expect(ctxA.progress({ pct: 50 })).rejects.toBeInstanceOf(StaleLeaseError);

    let stepRan = false;
    const step = ctxA.step('charge', () => {
      stepRan = true;
      return 'charged';
    });
    await expect(step).rejects.toBeInstanceOf(StaleLeaseError);
    expect(stepRan).toBe(false);

    let txRan = false;
    const tx = ctxA.txStep('write-side', async (c) => {
      txRan = true;
      await c.query(`insert into fx_side values ($1, 'stale')`, [id]);
      return 'written';
    });
    await expect(tx).rejects.toBeInstanceOf(StaleLeaseError);
    expect(txRan).toBe(false);

    const err = await ctxA.progress({ pct: 60 }).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'stale_lease', jobId: id, execution: 1 });

    expect(await snapshot(id)).toEqual(before);
    b.release.open();
    await b.run;
  });

  it('refuses complete, fail and heartbeat carrying the old execution and changes nothing', async () => {
    const { id, b } = await staleSetup();
    const before = await snapshot(id);

    expect(await protocol.completeMany(client.pool, client.namespace, [{ id, execution: 1, resultJson: '{"stale":true}' }])).toEqual(new Set());
    const failed = await protocol.failMany(client.pool, client.namespace, [{ id, execution: 1, error: { message: 'stale' } }]);
    expect(failed.size).toBe(0);
    const finalFail = await protocol.failMany(client.pool, client.namespace, [{ id, execution: 1, error: { message: 'x' }, final: true }]);
    expect(finalFail.size).toBe(0);
    const hb = await protocol.heartbeatMany(client.pool, client.namespace, 'worker-a', [{ id, execution: 1 }], 1, 600_000, 0);
    expect(hb.accepted.has(id)).toBe(false);
    // Even the right execution from the wrong worker does not extend B's lease.
    const hbWrongWorker = await protocol.heartbeatMany(client.pool, client.namespace, 'worker-a', [{ id, execution: 2 }], 1, 600_000, 0);
    expect(hbWrongWorker.accepted.has(id)).toBe(false);

    expect(await snapshot(id)).toEqual(before);

    // The new owner's writes still go through.
    b.release.open();
    expect(await b.run).toBe(true);
    const after = await snapshot(id);
    expect(after.job[0]).toMatchObject({ status: 'succeeded', result: { by: 'worker-b' }, execution: 2 });
    expect(after.attempts.map((x) => [x.execution, x.outcome, x.worker_id])).toEqual([
      [1, 'recovered', 'worker-a'],
      [2, 'succeeded', 'worker-b'],
    ]);
  });

  it("fires the old handler's AbortSignal with a StaleLeaseError on the old worker's next heartbeat", async () => {
    const { id, a, ctxA, b } = await staleSetup();
    expect(ctxA.signal.aborted).toBe(false);
    const stale = once(a.worker.events, 'stale');

    await a.worker.heartbeat();

    expect(ctxA.signal.aborted).toBe(true);
    expect(ctxA.signal.reason).toBeInstanceOf(StaleLeaseError);
    expect(ctxA.signal.reason).toMatchObject({ jobId: id, execution: 1 });
    const [err] = (await stale) as [StaleLeaseError];
    expect(err).toBeInstanceOf(StaleLeaseError);
    // The old worker gives up on the job without settling it.
    await a.run;
    expect(a.worker.runtimeState().activeJobIds).toEqual([]);
    expect((await snapshot(id)).job[0]).toMatchObject({ status: 'running', execution: 2 });

    // After the abort, the handler's writes fail fast without running anything.
    let ran = false;
    await expect(ctxA.txStep('late', async () => ((ran = true), 1))).rejects.toBeInstanceOf(StaleLeaseError);
    expect(ran).toBe(false);

    b.release.open();
    await b.run;
    expect((await snapshot(id)).job[0]).toMatchObject({ status: 'succeeded', result: { by: 'worker-b' } });
  });

  it.each([
    ['completes', undefined, 'complete'],
    ['throws', new Error('boom from the stale owner'), 'fail'],
  ] as const)(
    'refuses the settlement of an old handler that %s before noticing, and emits a stale event',
    async (_how, throws, what) => {
      const { id, a, b } = await staleSetup();
      const before = await snapshot(id);
      if (throws) a.outcome.throws = throws;
      const stale = once(a.worker.events, 'stale');
      const settled = new Promise((r) => a.worker.events.once('settled', r));

      a.release.open();
      const [err] = (await stale) as [StaleLeaseError];
      expect(err).toBeInstanceOf(StaleLeaseError);
      expect(err.message).toContain(`${what} refused`);
      expect(await settled).toMatchObject({ status: 'stale' });
      await a.run;

      expect(await snapshot(id)).toEqual(before);
      b.release.open();
      await b.run;
      await waitFor(() => snapshot(id), (s) => (s.job[0] as { status: string }).status === 'succeeded');
    },
  );
});
