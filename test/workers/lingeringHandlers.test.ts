// A handler that ignores its abort signal goes on running after its attempt
// ended (its timeout here). Its slot used to be freed at once, so a worker
// of concurrency 2 ran 8 such handler bodies at once. Now the slot stays
// taken until the handler returns: no more bodies run at once than the
// concurrency, the attempts still end at their timeout, and each
// lingering handler is named in one log line. A handler that honours its
// signal and settles right after the abort is not named (it was, as
// ignoring its signal, when it settled a microtask after the attempt ended).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/index.js';
import { startRunningWorker, type RunningWorker } from '../helpers/runningWorker.js';
import { waitFor } from '../helpers/wait.js';

const Stubborn = defineJob({
  type: 'linger.stubborn',
  schema: z.object({ ms: z.number() }),
  retry: { maxAttempts: 1 },
  timeoutMs: 200,
});
const Honouring = defineJob({ type: 'linger.honouring', schema: z.object({}), retry: { maxAttempts: 1 }, timeoutMs: 200 });

let w: RunningWorker;
let bodies = 0;
let maxBodies = 0;
let returned = 0;
const lines: string[] = [];

beforeAll(async () => {
  vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
  w = await startRunningWorker([Stubborn], { concurrency: 2, pollMs: 50 }, (worker) =>
    worker.handle(Stubborn, async (p) => {
      bodies++;
      maxBodies = Math.max(maxBodies, bodies);
      // Ignores ctx.signal altogether.
      await new Promise((r) => setTimeout(r, p.ms));
      bodies--;
      returned++;
    })
    // Honours ctx.signal: waits for the abort, then throws (it settles a few microtasks after it).
    .handle(Honouring, async (_p, ctx) => {
      await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      throw new Error('stopped because ctx.signal aborted');
    }),
  );
});

afterAll(async () => {
  await w?.stop();
  vi.restoreAllMocks();
});

describe('handlers that ignore their abort signal', () => {
  it('keep their slot until they return: never more bodies at once than the concurrency', async () => {
    const jobs = await w.client.enqueueMany(Array.from({ length: 6 }, () => ({ job: Stubborn, payload: { ms: 700 } })));
    // Every attempt ends at its timeout (failed: one attempt allowed), whatever its handler does.
    await waitFor(
      async () => Promise.all(jobs.map((j) => w.client.getJob(j.id))),
      (js) => js.every((j) => j?.status === 'failed'),
      { timeoutMs: 20_000, what: 'every job to fail at its timeout' },
    );
    await waitFor(() => returned, (n) => n === 6, { timeoutMs: 20_000, what: 'every handler to return' });
    expect(maxBodies).toBe(2);
    const lingering = lines.filter((l) => /ended \(.*\) but its handler is still running: it ignored ctx\.signal/.test(l));
    expect(lingering).toHaveLength(6);
    expect(lingering[0]).toMatch(/^\[workhorse\] worker \S+: job \d+ \(linger\.stubborn\) ended \(/);
  }, 30_000);

  it('are not said to ignore their signal when they settle right after the abort', async () => {
    const jobs = await w.client.enqueueMany(Array.from({ length: 3 }, () => ({ job: Honouring, payload: {} })));
    await waitFor(
      async () => Promise.all(jobs.map((j) => w.client.getJob(j.id))),
      (js) => js.every((j) => j?.status === 'failed'),
      { timeoutMs: 20_000, what: 'every job to fail at its timeout' },
    );
    // Past the grace a lingering handler gets before it is reported.
    await new Promise((r) => setTimeout(r, 600));
    expect(lines.filter((l) => l.includes('linger.honouring'))).toEqual([]);
  }, 30_000);
});
