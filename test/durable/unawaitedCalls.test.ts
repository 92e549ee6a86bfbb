// Context calls whose failure the handler no longer awaits. A failing
// ctx.txStep started before a wait and awaited after it, and a
// ctx.waitForSignal, ctx.progress or ctx.txStep left running past the
// handler's return (refused: the lease is gone), were unhandled rejections
// that ended the worker process (vitest fails this file on one). They are
// dropped now, as a plain step's is; a handler that awaits one still gets
// its error, and a suspension waits for a transactional step beside it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type Client } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Beside = defineJob({ type: 'dx.unawaited.beside', schema: z.object({}), retry: { maxAttempts: 1 } });
const Late = defineJob({ type: 'dx.unawaited.late', schema: z.object({ call: z.enum(['step', 'tx', 'wait', 'progress', 'spawn']) }), retry: { maxAttempts: 1 } });

let fx: RunningWorker;
let client: Client;
const lateErrors = new Map<string, unknown>();

beforeAll(async () => {
  fx = await startRunningWorker([Beside, Late], { workerId: 'unawaited', concurrency: 4, heartbeatMs: 500, pollMs: 100 }, (w) => {
    w.handle(Beside, async (_p, ctx) => {
      const charging = ctx.txStep('charge', async () => {
        await sleep(200);
        throw new Error('card declined');
      });
      const go = await ctx.waitForSignal<string>('go');
      return [go, await charging];
    });
    w.handle(Late, async ({ call }, ctx) => {
      setTimeout(() => {
        const p: Promise<unknown> =
          call === 'step'
            ? ctx.step('late', () => 1)
            : call === 'tx'
              ? ctx.txStep('late', async () => 1)
              : call === 'wait'
                ? ctx.waitForSignal('late')
                : call === 'progress'
                  ? ctx.progress(1)
                  : ctx.spawn('late', Beside, {});
        // Not awaited by the handler: only observed here, once it has failed.
        setTimeout(() => void p.catch((err: unknown) => lateErrors.set(ctx.job.id, err)), 500);
      }, 200);
      return 'returned';
    });
  });
  ({ client } = fx);
});

afterAll(async () => {
  await fx?.stop();
});

describe('a context call the handler no longer awaits', () => {
  it('a failing transactional step beside a wait: the job suspends once it failed, and the worker lives on', async () => {
    const { id } = await client.enqueue(Beside, {});
    const waiting = await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the job to wait for its signal', timeoutMs: 10_000 });
    expect(waiting!.status).toBe('waiting');
    await sleep(300);
    await client.signal(id, 'go', 'now');
    const failed = await waitFor(() => client.getJob(id), (j) => j!.status === 'failed', { what: 'the replay to meet the failure', timeoutMs: 10_000 });
    expect((failed!.lastError as { message: string }).message).toContain('card declined');
  });

  it.each(['step', 'tx', 'wait', 'progress', 'spawn'] as const)('(%s) made after the handler returned is refused without ending the worker', async (call) => {
    const { id } = await client.enqueue(Late, { call });
    const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: 'the job to succeed' });
    expect(done!.result).toBe('returned');
    await waitFor(() => Promise.resolve(lateErrors.get(id)), (e) => e !== undefined, { what: 'the late call to fail' });
    expect(lateErrors.get(id)).toMatchObject({ name: 'StaleLeaseError' });
  });
});
