// Heartbeats that cannot get through while claims can (a lock on the
// registry, as a plain CREATE INDEX on it takes): once no beat had reached
// the database for a whole lease, the worker gave up every lease it held,
// the ones it had claimed a moment before included, whose leases in the
// database were fresh. Their handlers were aborted and their jobs failed
// (maxAttempts 1) though nothing was wrong with them. A lease now runs out a
// whole lease after its last extension: the last beat, or its claim.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Work = defineJob({ type: 'hbblocked.work', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });
let fx: RunningWorker;

beforeAll(async () => {
  // A 1 s heartbeat: a 4 s lease.
  fx = await startRunningWorker([Work], { concurrency: 8, pollMs: 50, heartbeatMs: 1_000 }, (w) => {
    w.events.on('error', () => undefined);
    w.events.on('stale', () => undefined);
    w.handle(Work, async ({ n }) => {
      await sleep(1_500);
      return n;
    });
  });
  await waitFor(() => fx.worker.runtimeState().registered, Boolean, { what: 'registration' });
});

afterAll(async () => {
  await fx?.stop();
});

describe('heartbeats blocked while claims go through', () => {
  it('leave the leases claimed since the last beat alone: their jobs run to success', async () => {
    const holder = new pg.Client({ connectionString: fx.db.url });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table workhorse.worker_registry in share mode');
      // No beat has gone through for longer than the lease when the jobs are claimed.
      await sleep(4_500);
      const ids = (await fx.client.enqueueMany(Array.from({ length: 8 }, (_, n) => ({ job: Work, payload: { n } })))).map((j) => j.id);
      const finished = async () => (await fx.db.pool.query<{ n: number }>("select count(*)::int as n from workhorse.jobs where status in ('succeeded', 'failed')")).rows[0]!.n;
      await waitFor(finished, (n) => n === 8, {
        timeoutMs: 15_000,
        what: 'the eight jobs to finish',
      });
      await holder.query('commit');
      const jobs = await Promise.all(ids.map((id) => fx.client.getJob(id)));
      expect(jobs.map((j) => [j!.status, j!.attempt])).toEqual(ids.map(() => ['succeeded', 1]));
    } finally {
      await holder.end();
    }
  }, 40_000);
});
