// A step whose fenced read was held back (a lock on the lease table) while
// the worker gave the lease up (no heartbeat reached the database for a
// whole lease). The read then went through, the lease row still being
// there, and the step's body ran although the attempt was over; recovery
// then ran the job, and the step, again. The body now runs only if the
// attempt still holds its lease once the read is answered; a transactional
// step likewise.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, StaleLeaseError, type Client } from '../../src/index.js';
import { createContext, type JobContext } from '../../src/worker/context.js';
import { JobAbort } from '../../src/worker/jobAbort.js';
import type { TestDatabase } from '../helpers/db.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Job = defineJob({ type: 'dx.lostread', schema: z.object({ tx: z.boolean() }), retry: { maxAttempts: 1 } });
let fx: RunningWorker;
let db: TestDatabase;
let client: Client;
const outcomes = new Map<string, { ran: boolean; error: unknown }>();

beforeAll(async () => {
  fx = await startRunningWorker([Job], { workerId: 'lost-read', concurrency: 2, heartbeatMs: 500, pollMs: 100 }, (w) => {
    w.handle(Job, async ({ tx }, ctx) => {
      // A context of this lease whose read is answered only after its lease was given up.
      const abort = new JobAbort();
      const deps = (ctx as JobContext).deps;
      const protocol = {
        ...deps.protocol,
        beginTxStep: async (...args: Parameters<typeof deps.protocol.beginTxStep>) => {
          const opened = await deps.protocol.beginTxStep(...args);
          abort.abort(new StaleLeaseError(ctx.job.id, ctx.job.execution, 'heartbeat', 2_000));
          return opened;
        },
      };
      const late = createContext(ctx.job, abort, { ...deps, protocol });
      let ran = false;
      const body = () => {
        ran = true;
        return 'done';
      };
      const error = await (tx ? late.txStep('charge', async (_c: pg.PoolClient) => body()) : late.step('charge', body)).then(
        () => undefined,
        (e: unknown) => e,
      );
      outcomes.set(ctx.job.id, { ran, error });
      return 'ok';
    });
  });
  ({ db, client } = fx);
});

afterAll(async () => {
  await fx?.stop();
});

describe('a step whose lease was given up while its fenced read waited', () => {
  it.each([false, true])('does not run its body (transactional: %s), and records nothing', async (tx) => {
    const { id } = await client.enqueue(Job, { tx });
    await waitFor(() => outcomes.get(id), Boolean, { what: 'the step to end' });
    const { ran, error } = outcomes.get(id)!;
    expect(ran).toBe(false);
    expect(error).toBeInstanceOf(StaleLeaseError);
    expect((error as StaleLeaseError).expiredMs).toBe(2_000);
    expect((await db.pool.query('select 1 from workhorse.job_steps where job_id = $1', [id])).rowCount).toBe(0);
  });
});
