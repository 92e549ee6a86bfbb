// Durable waits: a plain step still running when a wait suspends the job.
// `Promise.all([ctx.waitForSignal('go'), ctx.step('charge', ...)])`, or a
// step started before a wait and awaited after it: the suspension released
// the lease under the step, its record was refused, the replay ran the body
// again, and the refusal, which nobody awaited any more, ended the worker
// process as an unhandled rejection (vitest fails this file on one). The
// suspension now waits for the step to be recorded. Also: the loser of a
// race the handler returns right after is closed, so a finished job keeps
// no wait open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type Client } from '../../src/index.js';
import type { TestDatabase } from '../helpers/db.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Beside = defineJob({ type: 'dx.steps.beside', schema: z.object({ shape: z.enum(['all', 'before']) }) });
const Race = defineJob({ type: 'dx.steps.race', schema: z.object({}) });

let fx: RunningWorker;
let db: TestDatabase;
let client: Client;
const bodies = new Map<string, number>();

beforeAll(async () => {
  const charge = (id: string) => async () => {
    await sleep(400);
    bodies.set(id, (bodies.get(id) ?? 0) + 1);
    return 7;
  };
  fx = await startRunningWorker([Beside, Race], { workerId: 'steps-beside', concurrency: 4, heartbeatMs: 500, pollMs: 100 }, (w) => {
    w.handle(Beside, async ({ shape }, ctx) => {
      if (shape === 'all') {
        const [go, charged] = await Promise.all([ctx.waitForSignal<string>('go'), ctx.step('charge', charge(ctx.job.id))]);
        return { go, charged };
      }
      const charging = ctx.step('charge', charge(ctx.job.id));
      const go = await ctx.waitForSignal<string>('go');
      return { go, charged: await charging };
    });
    w.handle(Race, async (_p, ctx) => Promise.race([ctx.waitForSignal<string>('fast'), ctx.sleep('timer', 3_600_000).then(() => 'slept')]));
  });
  ({ db, client } = fx);
});

afterAll(async () => {
  await fx?.stop();
});

describe('a step running when a wait suspends the job', () => {
  it.each(['all', 'before'] as const)('(%s) is recorded before the job suspends, runs once, and the worker lives on', async (shape) => {
    const { id } = await client.enqueue(Beside, { shape });
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the job to wait for its signal', timeoutMs: 10_000 });
    // The step was recorded under the lease, before the suspension.
    const steps = await db.pool.query('select name from workhorse.job_steps where job_id = $1', [id]);
    expect(steps.rows).toEqual([{ name: 'charge' }]);
    expect(bodies.get(id)).toBe(1);
    await client.signal(id, 'go', 'now');
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the job to finish', timeoutMs: 10_000 });
    expect(done!.result).toEqual({ go: 'now', charged: 7 });
    expect(done!.attempt).toBe(1);
    expect(bodies.get(id)).toBe(1);
  });
});

describe('a race the handler returns right after', () => {
  it('closes the losing wait: the finished job keeps no wait open', async () => {
    const { id } = await client.enqueue(Race, {});
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the race to wait', timeoutMs: 10_000 });
    await client.signal(id, 'fast', 'won');
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the race to finish', timeoutMs: 10_000 });
    expect(done!.result).toBe('won');
    const open = await db.pool.query('select name from workhorse.job_waits where job_id = $1 and resolved_at is null', [id]);
    expect(open.rows).toEqual([]);
    const timer = await db.pool.query<{ outcome: string }>("select outcome from workhorse.job_waits where job_id = $1 and name = 'timer'", [id]);
    expect(timer.rows).toEqual([{ outcome: 'lost' }]);
  });
});
