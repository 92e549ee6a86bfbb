// The cost of a durable wait's suspend/resume round trip (workhorse only),
// measured in this process on a fresh database, with the drain's worker
// settings (concurrency, prefetch):
//   - throughput: N jobs that each sleep 1 ms once (the wait opens, the job
//     is suspended, claimed again, its handler replayed past the recorded
//     wait and completed) against N plain jobs, rounds interleaved; the
//     difference in worker time per job is the round trip's cost;
//   - signal to resume: one idle worker with LISTEN, one job waiting for a
//     signal at a time; the time from client.signal() to the replayed
//     handler passing the wait.
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { percentiles, type Percentiles } from '../stats.js';
import { withDatabase, type PhaseContext } from './context.js';

const Plain = defineJob({ type: 'bench.plain', queue: 'suspend', schema: z.object({}) });
const Nap = defineJob({ type: 'bench.nap', queue: 'suspend', schema: z.object({}) });
const Waiter = defineJob({ type: 'bench.waiter', queue: 'suspend', schema: z.object({}) });
const MAX_JOBS = 10_000;
const SIGNAL_SAMPLES = 100;

export interface SuspendResult {
  jobs: number;
  /** Median of the rounds, jobs/s, first handler start to last return. */
  plainJobsPerSec: number;
  sleepingJobsPerSec: number;
  /** Extra worker time per job that suspends once and resumes, in microseconds. */
  roundTripUs: number;
  /** client.signal() to the replayed handler past the wait, ms. */
  signalToResume: Percentiles;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor((xs.length - 1) / 2)]!;

async function timed(ctx: PhaseContext, client: Client, job: typeof Plain, n: number, naps: boolean): Promise<number> {
  const w = new Worker(client, { queues: ['suspend'], concurrency: ctx.flags.concurrency, prefetch: ctx.flags.prefetch, heartbeatMs: 30_000 });
  let first = 0;
  let last = 0;
  let done = 0;
  w.handle(job, async (_p, c) => {
    if (first === 0) first = performance.now();
    if (naps) await c.sleep('nap', 1);
    last = performance.now();
    done++;
    return null;
  });
  await client.enqueueMany(Array.from({ length: n }, () => ({ job, payload: {} })));
  const running = w.run();
  while (done < n) await sleep(20);
  await w.stop();
  await running;
  return n / ((last - first) / 1000);
}

async function signalLatency(client: Client): Promise<Percentiles> {
  const w = new Worker(client, { queues: ['suspend'], concurrency: 4, heartbeatMs: 30_000 });
  const passed = new Map<string, number>();
  w.handle(Waiter, async (_p, c) => {
    await c.waitForSignal('go');
    passed.set(c.job.id, performance.now());
    return null;
  });
  const running = w.run();
  const lags: number[] = [];
  try {
    for (let i = 0; i < SIGNAL_SAMPLES; i++) {
      const { id } = await client.enqueue(Waiter, {});
      while ((await client.getJob(id))!.status !== 'waiting') await sleep(2);
      await sleep(20); // the worker is idle again, listening
      const t0 = performance.now();
      await client.signal(id, 'go', null);
      while (!passed.has(id)) await sleep(1);
      lags.push(passed.get(id)! - t0);
    }
  } finally {
    await w.stop();
    await running;
  }
  return percentiles(lags);
}

export async function measureSuspend(ctx: PhaseContext): Promise<SuspendResult> {
  const n = Math.min(ctx.flags.jobs, MAX_JOBS);
  return withDatabase(ctx, 'workhorse', async (db) => {
    const client = createClient({ connectionString: db.url, jobs: [Plain, Nap, Waiter], poolMax: 10 });
    try {
      const plain: number[] = [];
      const naps: number[] = [];
      for (let i = 1; i <= ctx.flags.rounds; i++) {
        ctx.log(`suspend round trip, round ${i}/${ctx.flags.rounds}`);
        plain.push(await timed(ctx, client, Plain, n, false));
        naps.push(await timed(ctx, client, Nap, n, true));
      }
      const p = median(plain);
      const s = median(naps);
      return {
        jobs: n,
        plainJobsPerSec: p,
        sleepingJobsPerSec: s,
        roundTripUs: 1e6 / s - 1e6 / p,
        signalToResume: await signalLatency(client),
      };
    } finally {
      await client.close();
    }
  });
}

export function suspendLines(r: SuspendResult): string[] {
  const int = (x: number) => Math.round(x).toLocaleString('en-US');
  return [
    '',
    'durable waits (workhorse, one process):',
    `  ${int(r.jobs)} jobs: plain ${int(r.plainJobsPerSec)} jobs/s; each sleeping 1 ms once (suspend, claim, replay, complete) ${int(r.sleepingJobsPerSec)} jobs/s`,
    `  a suspend/resume round trip costs ${int(r.roundTripUs)} us of worker time per job (the difference of the two, median rounds)`,
    `  client.signal() to the handler past its wait, idle LISTEN worker: p50 ${r.signalToResume.p50.toFixed(1)} ms, p95 ${r.signalToResume.p95.toFixed(1)}, max ${r.signalToResume.max.toFixed(1)} (${r.signalToResume.samples} samples)`,
  ];
}
