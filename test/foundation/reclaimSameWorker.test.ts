// A claim can hand a worker a job it still holds under an older execution:
// the database lost its (UNLOGGED) leases in a crash, or a peer recovered a
// lease that expired while the worker stalled. The new lease supersedes the
// old one: the old handler is aborted with StaleLeaseError, its late result
// is refused by the fence, the new execution settles the job, and the
// worker's slot accounting stays right (it goes on running its full
// concurrency), and a heartbeat refusing the old execution cannot abort the
// new one.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { StaleLeaseError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Reclaim = defineJob({ type: 'fx.reclaim', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
let client: Client;
let worker: Worker | undefined;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, poolMax: 6, jobs: [Reclaim] });
});

afterEach(async () => {
  await worker?.stop({ hard: true });
  worker = undefined;
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('a worker re-claiming a job it still holds', () => {
  it('aborts the old execution, settles the new one and keeps its slots', async () => {
    const { id } = await client.enqueue(Reclaim, { n: 0 });
    const runs: { execution: number; aborted?: unknown; returned?: boolean }[] = [];
    let pairStarted = 0;
    worker = new Worker(client, { workerId: 'reclaimer', concurrency: 2, heartbeatMs: 60_000, listen: false, pollMs: 50 });
    worker.handle(Reclaim, async (payload, ctx) => {
      if (payload.n > 0) {
        // Two of these must run side by side: each waits for the other.
        pairStarted++;
        await waitFor(() => pairStarted, (n) => n >= 2, { timeoutMs: 15_000, what: 'both jobs of the pair running at once' });
        return { by: 'pair' };
      }
      const run: { execution: number; aborted?: unknown; returned?: boolean } = { execution: ctx.job.execution };
      runs.push(run);
      if (runs.length === 1) {
        // The first execution waits until it is aborted, then returns anyway: the fence must refuse it.
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        run.aborted = ctx.signal.reason;
        run.returned = true;
        return { by: 'old' };
      }
      return { by: 'new' };
    });
    const running = worker.run();
    await waitFor(() => runs.length, (n) => n === 1, { what: 'the first execution to start' });

    // The database loses every lease, as after a crash: the job is ready again.
    await db.pool.query('delete from workhorse.job_runtime');
    await db.pool.query('delete from workhorse.lease_marker');

    const job = await waitFor(
      () => client.getJob(id),
      (j) => j?.status === 'succeeded',
      { what: 'the re-claimed execution to settle' },
    );
    await waitFor(() => runs[0]!.returned === true, (v) => v, { what: 'the old handler to return' });
    expect(runs).toHaveLength(2);
    expect(runs[1]!.execution).toBeGreaterThan(runs[0]!.execution);
    expect(runs[0]!.aborted).toBeInstanceOf(StaleLeaseError);
    expect(job).toMatchObject({ status: 'succeeded', result: { by: 'new' }, execution: runs[1]!.execution });
    await waitFor(() => worker!.runtimeState(), (r) => r.active === 0 && r.buffered === 0, { what: 'the slots to be free' });
    expect(worker.runtimeState().activeJobIds).toEqual([]);

    // Both slots are free for real: two jobs that wait for each other finish.
    const pair = await client.enqueueMany([
      { job: Reclaim, payload: { n: 1 } },
      { job: Reclaim, payload: { n: 2 } },
    ]);
    for (const p of pair) {
      await waitFor(() => client.getJob(p.id), (j) => j?.status === 'succeeded', { what: `pair job ${p.id}` });
    }
    await worker.stop();
    await running;
  });
});
