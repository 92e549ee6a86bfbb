// A job's timeoutMs while a suspension waits for a step still running
// beside it (`Promise.all([ctx.waitForSignal('go'), ctx.step(...)])`). The
// timer was cleared when the handler's outcome came in, before the
// suspension waited for the step: a step that never settled kept the job
// running and heartbeated for ever, and a slow one suspended the job long
// past its timeout with ctx.signal never aborted. The attempt now ends with
// JobTimeoutError at its timeout, as it does without the wait.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, type Client } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Slow = defineJob({
  type: 'dx.timeout.beside',
  schema: z.object({ stepMs: z.number().nullable() }),
  timeoutMs: 700,
  retry: { maxAttempts: 1 },
});

let fx: RunningWorker;
let client: Client;
const abortedAfter = new Map<string, number>();

beforeAll(async () => {
  fx = await startRunningWorker([Slow], { workerId: 'timeout-beside', concurrency: 2, heartbeatMs: 200, pollMs: 100 }, (w) => {
    w.handle(Slow, async ({ stepMs }, ctx) => {
      const started = Date.now();
      ctx.signal.addEventListener('abort', () => abortedAfter.set(ctx.job.id, Date.now() - started));
      const body = () => (stepMs === null ? new Promise<number>(() => {}) : sleep(stepMs).then(() => 1));
      const [go] = await Promise.all([ctx.waitForSignal<string>('go'), ctx.step('slow', body)]);
      return go;
    });
  });
  ({ client } = fx);
});

afterAll(async () => {
  await fx?.stop();
});

describe('a suspension waiting for a step beside it', () => {
  it.each([
    ['never settles', null],
    ['outruns the timeout', 1_500],
  ] as const)('fails the attempt with JobTimeoutError at the timeout when the step %s', async (_what, stepMs) => {
    const { id } = await client.enqueue(Slow, { stepMs });
    const done = await waitFor(() => client.getJob(id), (j) => ['failed', 'succeeded', 'waiting'].includes(j!.status), {
      what: 'the attempt to end',
      timeoutMs: 5_000,
    });
    expect(done!.status).toBe('failed');
    expect(done!.lastError).toMatchObject({ name: 'JobTimeoutError' });
    expect(abortedAfter.get(id)).toBeGreaterThanOrEqual(650);
    expect(abortedAfter.get(id)).toBeLessThan(1_400);
  });
});
