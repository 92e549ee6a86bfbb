// A signal sent to a name the job holds as a sleep, a decision or a join:
// no such wait is ever resolved by a signal, and a name stands for one kind
// of wait for the life of the job, so the signal used to be answered `kept`
// and stored for ever, unread, while the job went on waiting (a webhook
// that signalled a decision was told it had been accepted). It is refused
// with a ConflictError now (HTTP 409) and nothing is stored.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConflictError, defineJob, type Client } from '../../src/index.js';
import type { TestDatabase } from '../helpers/db.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Nap = defineJob({ type: 'dx.other.nap', schema: z.object({}) });
const Ask = defineJob({ type: 'dx.other.ask', schema: z.object({}) });

let fx: RunningWorker;
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  fx = await startRunningWorker([Nap, Ask], { workerId: 'other-waits', concurrency: 2, pollMs: 100 }, (w) => {
    w.handle(Nap, async (_p, ctx) => {
      await ctx.sleep('nap', 3_600_000);
      return 'rested';
    });
    w.handle(Ask, async (_p, ctx) => (await ctx.waitForDecision('ok', { choices: ['yes', 'no'] })).choice);
  });
  ({ db, client } = fx);
});

afterAll(async () => {
  await fx?.stop();
});

describe('a signal to a wait that is not a signal wait', () => {
  it.each([
    ['a sleep', Nap, 'nap'],
    ['a decision', Ask, 'ok'],
  ] as const)('to %s is a ConflictError and is not kept', async (_what, job, name) => {
    const { id } = await client.enqueue(job, {});
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the job to wait', timeoutMs: 10_000 });
    const err = await client.signal(id, name, 1).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConflictError);
    expect((err as Error).message).toMatch(new RegExp(`wait "${name}" is a sleep, a decision or a join, not a signal wait`));
    const kept = await db.pool.query('select id from workhorse.job_signals where job_id = $1', [id]);
    expect(kept.rows).toEqual([]);
    expect((await client.getJob(id))!.status).toBe('waiting');
  });

  it('the decision is still made with client.decide', async () => {
    const { id } = await client.enqueue(Ask, {});
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the job to wait', timeoutMs: 10_000 });
    await expect(client.signal(id, 'ok', 'yes')).rejects.toBeInstanceOf(ConflictError);
    await client.decide(id, 'ok', { choice: 'yes', by: 'ops' });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the decided job to finish', timeoutMs: 10_000 });
    expect(done!.result).toBe('yes');
  });
});
