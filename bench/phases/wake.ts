// The wake path of long-lived workhorse workers, measured in this process
// (one clock for enqueue and start) on a fresh database:
//   - delayed jobs: how late each starts after its due time (the database's
//     started_at - run_at), with a LISTEN listener and without one (safety
//     poll 1 s backing off to 5 s, next-due reads), with the misses (> 50 ms);
//   - stagger: 8 idle workers and one notification: how many claim
//     statements run, how many found the job, and how far apart they ran,
//     with the default stagger and with it off;
//   - enqueue-to-start p50 with Redis wake hints and LISTEN off, against
//     LISTEN alone.
// Claim statements are counted in the workers' own protocol calls (each
// call is one claim_many_v1 statement); pg_stat_statements is not assumed.
import { createClient as createRedis } from 'redis';
import { z } from 'zod';
import { createClient, defineJob, redisWakeHints, Worker, type Client, type WorkerOptions } from '../../src/index.js';
import { percentiles, type Percentiles } from '../stats.js';
import { withDatabase, type PhaseContext } from './context.js';

const Tick = defineJob({ type: 'bench.wake', queue: 'wake', schema: z.object({ at: z.number() }) });
const MISS_MS = 50;

export interface DelayedLag extends Percentiles {
  misses: number;
}

export interface StaggerRun {
  staggerMs: number;
  claims: number;
  found: number;
  spreadMs: number;
}

export interface WakeResult {
  delayedWithListener: DelayedLag;
  delayedWithoutListener: DelayedLag;
  stagger: StaggerRun[];
  listenStart: Percentiles;
  redisStart: Percentiles | { unavailable: string };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A client whose claim statements are counted (each still runs on the database). */
function countingClient(url: string): { client: Client; claims: { at: number; got: number }[] } {
  const client = createClient({ connectionString: url, jobs: [Tick], poolMax: 3 });
  const claims: { at: number; got: number }[] = [];
  const real = client.protocol;
  Object.defineProperty(client, 'protocol', {
    value: {
      ...real,
      claimMany: async (...args: Parameters<typeof real.claimMany>) => {
        const at = performance.now();
        const jobs = await real.claimMany(...args);
        claims.push({ at, got: jobs.length });
        return jobs;
      },
    },
  });
  return { client, claims };
}

async function startWorker(client: Client, options: WorkerOptions, onStart: (at: number) => void = () => undefined): Promise<Worker> {
  const w = new Worker(client, { queues: ['wake'], concurrency: 4, heartbeatMs: 30_000, ...options } as WorkerOptions);
  w.handle(Tick, (p) => {
    onStart(performance.now());
    return p;
  });
  void w.run();
  while (!w.runtimeState().registered) await sleep(10);
  await sleep(300); // the LISTEN (or subscription) is up and the first look has passed
  return w;
}

async function delayedLag(url: string, listen: boolean, samples: number): Promise<DelayedLag> {
  const { client } = countingClient(url);
  const w = await startWorker(client, { listen });
  try {
    // Due times spread over 2-8 s, enqueued at once: later than any poll wait, so a miss is the wake path's.
    const jobs = await Promise.all(
      Array.from({ length: samples }, (_, i) => client.enqueue(Tick, { at: 0 }, { delayMs: 2_000 + Math.round((6_000 * i) / samples) })),
    );
    const ids = jobs.map((j) => j.id);
    for (;;) {
      const r = await client.pool.query<{ n: number }>(`select count(*)::int as n from workhorse.jobs where id = any($1) and status = 'succeeded'`, [ids]);
      if (r.rows[0]!.n === ids.length) break;
      await sleep(100);
    }
    const r = await client.pool.query<{ ms: number }>(`select extract(epoch from started_at - run_at) * 1000 as ms from workhorse.jobs where id = any($1)`, [ids]);
    const lags = r.rows.map((x) => Number(x.ms));
    return { ...percentiles(lags), misses: lags.filter((x) => x > MISS_MS).length };
  } finally {
    await w.stop();
    await client.close();
  }
}

async function staggerRun(url: string, staggerMs: number): Promise<StaggerRun> {
  const peers = Array.from({ length: 8 }, () => countingClient(url));
  const workers: Worker[] = [];
  for (const p of peers) workers.push(await startWorker(p.client, { staggerMs, registryIntervalMs: 100, pollMs: 60_000 }));
  await sleep(300); // every peer has seen the others in the registry
  try {
    const from = performance.now();
    const { id } = await peers[0]!.client.enqueue(Tick, { at: 0 });
    while ((await peers[0]!.client.getJob(id))?.status !== 'succeeded') await sleep(20);
    await sleep(staggerMs + 300);
    // Each worker's first claim after the notification is the one it triggered.
    const first = peers.map((p) => p.claims.find((c) => c.at >= from)).filter((c) => c !== undefined);
    const at = first.map((c) => c.at);
    return { staggerMs, claims: first.length, found: first.filter((c) => c.got > 0).length, spreadMs: Math.max(...at) - Math.min(...at) };
  } finally {
    await Promise.all(workers.map((w) => w.stop()));
    await Promise.all(peers.map((p) => p.client.close()));
  }
}

async function enqueueToStart(client: Client, options: WorkerOptions, samples: number): Promise<Percentiles> {
  let started: ((at: number) => void) | undefined;
  const w = await startWorker(client, { pollMs: 60_000, maxPollMs: 60_000, ...options }, (at) => started?.(at));
  try {
    const lags: number[] = [];
    for (let i = 0; i < samples; i++) {
      const t0 = performance.now();
      const startedAt = new Promise<number>((r) => (started = r));
      await client.enqueue(Tick, { at: t0 });
      lags.push((await startedAt) - t0);
      await sleep(10 + Math.random() * 20);
    }
    return percentiles(lags);
  } finally {
    await w.stop();
  }
}

async function redisReachable(url: string): Promise<string | undefined> {
  const c = createRedis({ url, socket: { connectTimeout: 1_000, reconnectStrategy: false } });
  c.on('error', () => undefined);
  try {
    await c.connect();
    await c.ping();
    return undefined;
  } catch (err) {
    return `Redis at ${url} not reachable: ${String(err)}`;
  } finally {
    c.destroy();
  }
}

export function measureWake(ctx: PhaseContext): Promise<WakeResult> {
  const samples = Math.max(10, Math.min(60, Math.floor(ctx.flags['latency-samples'] / 4)));
  const redisUrl = ctx.flags['redis-url'];
  return withDatabase(ctx, 'workhorse', async (db) => {
    ctx.log('wake: delayed jobs, with a listener');
    const delayedWithListener = await delayedLag(db.url, true, samples);
    ctx.log('wake: delayed jobs, without a listener');
    const delayedWithoutListener = await delayedLag(db.url, false, samples);
    ctx.log('wake: 8 idle workers, one notification');
    const stagger = [await staggerRun(db.url, 10), await staggerRun(db.url, 0)];
    ctx.log('wake: enqueue-to-start, LISTEN');
    const listenClient = createClient({ connectionString: db.url, jobs: [Tick], poolMax: 3 });
    const listenStart = await enqueueToStart(listenClient, { listen: true }, ctx.flags['latency-samples']).finally(() => listenClient.close());
    ctx.log('wake: enqueue-to-start, Redis hints with LISTEN off');
    const unreachable = await redisReachable(redisUrl);
    let redisStart: WakeResult['redisStart'] = { unavailable: unreachable ?? '' };
    if (!unreachable) {
      const hints = redisWakeHints({ url: redisUrl });
      const redisClient = createClient({ connectionString: db.url, namespace: `bench_${process.pid}`, jobs: [Tick], poolMax: 3, wakeHints: hints });
      try {
        redisStart = await enqueueToStart(redisClient, { listen: false }, ctx.flags['latency-samples']);
      } finally {
        await redisClient.close();
        await hints.close();
      }
    }
    return { delayedWithListener, delayedWithoutListener, stagger, listenStart, redisStart };
  });
}

const ms = (n: number) => (n < 10 ? n.toFixed(2) : n.toFixed(1));

/** The phase's lines in the bench table. */
export function wakeLines(w: WakeResult): string[] {
  const lag = (l: DelayedLag) => `p50 ${ms(l.p50)} ms, p95 ${ms(l.p95)}, max ${ms(l.max)}; ${l.misses} of ${l.samples} later than ${MISS_MS} ms`;
  const redis = 'unavailable' in w.redisStart ? `not measured (${w.redisStart.unavailable})` : `p50 ${ms(w.redisStart.p50)} ms (p95 ${ms(w.redisStart.p95)})`;
  const ratio = 'unavailable' in w.redisStart ? '' : `, ${(w.redisStart.p50 / w.listenStart.p50).toFixed(2)}x LISTEN's`;
  return [
    '',
    'wake path (workhorse):',
    `  delayed job start after its due time, LISTEN: ${lag(w.delayedWithListener)}`,
    `  delayed job start after its due time, no listener: ${lag(w.delayedWithoutListener)}`,
    ...w.stagger.map(
      (s) => `  8 idle workers, one notification, stagger ${s.staggerMs} ms: ${s.claims} claim statements, ${s.found} found the job, spread over ${ms(s.spreadMs)} ms`,
    ),
    `  enqueue-to-start, LISTEN: p50 ${ms(w.listenStart.p50)} ms (p95 ${ms(w.listenStart.p95)}); Redis hints, LISTEN off: ${redis}${ratio}`,
  ];
}
