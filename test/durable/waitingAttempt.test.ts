// A waiting job is in the middle of an attempt (a suspension counts none),
// and every read shows the attempt it is on: client.getJob, the API, the
// dashboard's Job view and, which showed the stored 0, the Namespace table.
// Cancelling it keeps that attempt, as cancelling a running job keeps its
// lease's; it went back to 0 for a job that had run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Napper = defineJob({ type: 'attempt.nap', schema: z.object({}), retry: { maxAttempts: 3 } });
const seen: number[] = [];
let w: RunningWorker;

beforeAll(async () => {
  w = await startRunningWorker([Napper], { pollMs: 50 }, (worker) =>
    worker.handle(Napper, async (_p, ctx) => {
      seen.push(ctx.job.attempt);
      await ctx.sleep('nap', 600_000);
    }),
  );
});

afterAll(async () => {
  await w?.stop();
});

describe('a waiting job', () => {
  it('reads as the attempt it is on everywhere, and keeps it when cancelled', async () => {
    const { id } = await w.client.enqueue(Napper, {});
    const waiting = await waitFor(() => w.client.getJob(id), (j) => j?.status === 'waiting', { what: 'the job to wait' });
    expect(seen).toEqual([1]);
    expect(waiting!.attempt).toBe(1);
    const table = await w.db.pool.query<{ jobs: { id: string; status: string; attempt: number }[] }>(
      `select jobs from workhorse.dashboard_jobs_v1('default', 'waiting', null, null, 50, null, 10000)`,
    );
    expect(table.rows[0]!.jobs).toEqual([expect.objectContaining({ id, status: 'waiting', attempt: 1 })]);

    expect(await w.client.cancel(id)).toMatchObject({ status: 'cancelled', attempt: 1 });
    expect(await w.client.getJob(id)).toMatchObject({ status: 'cancelled', attempt: 1 });
  });
});
