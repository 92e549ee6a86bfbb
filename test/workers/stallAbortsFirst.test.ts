// A worker whose process stalls for longer than a lease (stopped, or its
// event loop blocked by a handler's synchronous code) gives its leases up
// as soon as it runs again, before anything the stall held back: a handler
// whose timer came due meanwhile finds its ctx.signal aborted, and does not
// go on to a side effect another worker may already be repeating. It used
// to find the signal not aborted: the late beat gave the leases up only
// once its round trip to the database had failed or answered. The stall is
// one lease's worth and more of synchronous work on this process's own
// event loop, as a handler that blocks it makes. A handler that blocked
// the loop itself and then returned was not aborted, and the stall's line
// no longer says it was (its outcome was written: no other worker took the job).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob, StaleLeaseError, WorkerStalledError } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Effect = defineJob({ type: 'stall.effect', schema: z.object({}), retry: { maxAttempts: 3 } });
const Blocking = defineJob({ type: 'stall.blocking', schema: z.object({}), retry: { maxAttempts: 3 } });

let w: RunningWorker;
let started = 0;
const sawAborted: boolean[] = [];
const errors: unknown[] = [];
const stale: StaleLeaseError[] = [];

beforeAll(async () => {
  w = await startRunningWorker([Effect], { heartbeatMs: 200, leaseMs: 800, listen: false, pollMs: 50, concurrency: 1 }, (worker) =>
    worker.handle(Effect, async (_p, ctx) => {
      started++;
      await new Promise((r) => setTimeout(r, 2_000));
      sawAborted.push(ctx.signal.aborted);
      if (ctx.signal.aborted) throw ctx.signal.reason;
      return 'effect';
    }).handle(Blocking, () => {
      blockFor(3_000);
      return { blocked: 3_000 };
    }),
  );
  w.worker.events.on('error', (e) => errors.push(e));
  w.worker.events.on('stale', (e) => stale.push(e));
});
afterAll(async () => {
  await w?.stop();
});

function blockFor(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until) {
    // a handler's synchronous work: nothing else in the process runs
  }
}

describe('a worker process stalled for longer than a lease', () => {
  it("aborts the handlers' signals before their timers that came due meanwhile run, and says it stalled", async () => {
    await w.client.enqueue(Effect, {});
    await waitFor(() => started, (n) => n === 1, { what: 'the handler to start' });
    // The handler's 2 s timer comes due during the stall; the next beat was due within 200 ms.
    blockFor(3_000);
    await waitFor(() => sawAborted.length, (n) => n === 1, { what: 'the handler to resume' });
    expect(sawAborted).toEqual([true]);
    expect(stale[0]?.stalledMs).toBeGreaterThan(800);
    expect(stale[0]?.message).toMatch(/ran out while this process was stalled for \d+ ms \(stopped, or its event loop blocked\), longer than its lease \(800 ms\)/);
    const stalled = errors.find((e) => e instanceof WorkerStalledError && e.code === 'worker_stalled') as WorkerStalledError | undefined;
    expect(stalled?.expiredLeases).toBe(1);
    expect(stalled?.abortedHandlers).toBe(1);
    expect(stalled?.message).toMatch(/^the heartbeat fired \d+ ms late: this process was stopped, or its event loop blocked/);
    expect(stalled?.message).toMatch(/ran out meanwhile: 1 running handler\(s\) are aborted\./);
  });

  it('says a handler that blocked the loop and then returned was not aborted: its outcome is written', async () => {
    errors.length = 0;
    const { id } = await w.client.enqueue(Blocking, {});
    const job = await waitFor(() => w.client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the blocking job to succeed' });
    expect(job?.result).toEqual({ blocked: 3_000 });
    const stalled = errors.find((e) => e instanceof WorkerStalledError) as WorkerStalledError | undefined;
    expect(stalled?.abortedHandlers).toBe(0);
    expect(stalled?.message).toMatch(/ran out meanwhile: 1 not running \(waiting to start, or returned with the outcome being written/);
    expect(stalled?.message).not.toMatch(/aborted/);
  });
});
