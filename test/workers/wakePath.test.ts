// The wake path, neither sleeping nor stampeding: wake hints are per queue
// (a channel each, within PostgreSQL's 63-byte limit) and say when the job
// comes due; a delayed or retried job starts at its due time whether or
// not a listener is up (the database tells the worker when the next one
// comes due); hint-triggered claims of workers sharing a queue are spread
// by a small random stagger (a worker alone does not wait); and a worker
// without a listener backs off its empty polls and resets on a claim.
// Claims are counted by wrapping the client's real protocol calls.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, wakeChannel, Worker, type Client, type WorkerOptions } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const A = defineJob({ type: 'wake.a', queue: 'wake.a', schema: z.object({ n: z.number() }) });
const B = defineJob({ type: 'wake.b', queue: 'wake.b', schema: z.object({ n: z.number() }) });
const Flaky = defineJob({
  type: 'wake.flaky',
  queue: 'wake.a',
  schema: z.object({ n: z.number() }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 600 } },
});
/** A safety poll this long never fires during a test. */
const NEVER_MS = 120_000;

let db: TestDatabase;
const clients: Client[] = [];
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
  await Promise.all(clients.splice(0).map((c) => c.close()));
  await db.pool.query('delete from workhorse.job_runtime; delete from workhorse.job_attempts; delete from workhorse.jobs');
});

afterAll(async () => {
  await db?.drop();
});

interface Claims {
  at: number[];
  got: number[];
}

/** A client whose claims are counted (each still runs claim_many_v1 on the database). */
function countingClient(): { client: Client; claims: Claims } {
  const client = createClient({ connectionString: db.url, jobs: [A, B, Flaky], poolMax: 3 });
  clients.push(client);
  const claims: Claims = { at: [], got: [] };
  const real = client.protocol;
  Object.defineProperty(client, 'protocol', {
    value: {
      ...real,
      claimMany: async (...args: Parameters<typeof real.claimMany>) => {
        claims.at.push(Date.now());
        const jobs = await real.claimMany(...args);
        claims.got.push(jobs.length);
        return jobs;
      },
    },
  });
  return { client, claims };
}

async function idleWorker(client: Client, options: WorkerOptions): Promise<Worker> {
  const w = new Worker(client, { queues: ['wake.a'], pollMs: NEVER_MS, heartbeatMs: 60_000, ...options } as WorkerOptions);
  w.handle(A, ({ n }) => ({ n }));
  workers.push(w);
  void w.run();
  await waitFor(() => w.runtimeState().registered, Boolean, { what: 'registration' });
  return w;
}

async function listening(n: number): Promise<void> {
  await waitFor(
    async () => (await db.pool.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and query ilike 'listen %'`)).rows[0]!.n,
    (x) => x >= n,
    { what: `${n} LISTEN connection(s)` },
  );
  await sleep(100); // the first look has passed; the workers wait
}

/** How late the job started after it came due, by the database clock (ms). */
async function startLag(id: string): Promise<number> {
  const r = await db.pool.query<{ ms: number }>(
    `select extract(epoch from started_at - run_at) * 1000 as ms from workhorse.jobs where id = $1`,
    [id],
  );
  return Number(r.rows[0]!.ms);
}

describe('wake channels', () => {
  it('names one channel per queue, identical in SQL and TypeScript, within 63 bytes and distinct past it', async () => {
    const long = 'q'.repeat(100);
    const cases: [string, string][] = [['default', 'email'], ['n'.repeat(40), long], ['n'.repeat(40), `${long.slice(0, 99)}x`]];
    for (const [ns, q] of cases) {
      const r = await db.pool.query<{ c: string }>('select workhorse.wake_channel_v1($1, $2) as c', [ns, q]);
      expect(r.rows[0]!.c).toBe(wakeChannel(ns, q));
      expect(Buffer.byteLength(wakeChannel(ns, q))).toBeLessThanOrEqual(63);
    }
    expect(wakeChannel('default', 'email')).toBe('workhorse:default:email');
    expect(wakeChannel(...cases[1]!)).not.toBe(wakeChannel(...cases[2]!));
  });

  it('notifies only the queue that got work, with the milliseconds until it comes due', async () => {
    const { client } = countingClient();
    const listener = new pg.Client({ connectionString: db.url });
    await listener.connect();
    const heard: { channel: string; payload: string | undefined }[] = [];
    listener.on('notification', (n) => heard.push({ channel: n.channel, payload: n.payload }));
    await listener.query(`listen "${wakeChannel('default', 'wake.a')}"`);
    try {
      await client.enqueue(B, { n: 1 });
      await client.enqueue(A, { n: 1 });
      await client.enqueue(A, { n: 2 }, { delayMs: 5_000 });
      await waitFor(() => heard.length, (n) => n >= 2, { what: 'two hints' });
      await sleep(100);
      expect(heard.map((h) => h.channel)).toEqual(['workhorse:default:wake.a', 'workhorse:default:wake.a']);
      expect(heard[0]!.payload).toBe('0');
      expect(Number(heard[1]!.payload)).toBeGreaterThan(4_900);
      expect(Number(heard[1]!.payload)).toBeLessThanOrEqual(5_000);
    } finally {
      await listener.end();
    }
  });

  it('does not wake a worker for activity on another queue', async () => {
    const { client, claims } = countingClient();
    await idleWorker(client, {});
    await listening(1);
    const before = claims.at.length;
    await client.enqueueMany([1, 2, 3].map((n) => ({ job: B, payload: { n } })));
    await sleep(300);
    expect(claims.at.length).toBe(before);
    const { id } = await client.enqueue(A, { n: 1 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job on its own queue' });
    expect(claims.at.length).toBeGreaterThan(before);
  });
});

describe('delayed and retried jobs', () => {
  it('starts a delayed job at its due time with a listener (the hint says when)', async () => {
    const { client } = countingClient();
    await idleWorker(client, {});
    await listening(1);
    const { id } = await client.enqueue(A, { n: 1 }, { delayMs: 700 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the delayed job' });
    expect(await startLag(id)).toBeLessThan(1_000); // its poll is 120 s away: only the hint starts it this soon
  });

  it('starts a delayed job at its due time without a listener (its poll reads when the next one comes due)', async () => {
    const { client } = countingClient();
    await idleWorker(client, { listen: false, pollMs: 200, maxPollMs: 400 });
    const { id } = await client.enqueue(A, { n: 1 }, { delayMs: 1_500 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the delayed job' });
    expect(await startLag(id)).toBeLessThan(100);
  });

  it('starts each of several delayed jobs at its due time when a due claim fills every slot (concurrency 1)', async () => {
    // The due claim that filled the one slot used up the wake-up: the next delayed job waited for the safety poll.
    const { client } = countingClient();
    await idleWorker(client, { concurrency: 1 });
    await listening(1);
    const ids = (await client.enqueueMany([700, 1_400, 2_100].map((delayMs) => ({ job: A, payload: { n: delayMs }, options: { delayMs } })))).map((r) => r.id);
    await waitFor(() => Promise.all(ids.map((id) => client.getJob(id))), (js) => js.every((j) => j?.status === 'succeeded'), {
      what: 'the three delayed jobs',
      timeoutMs: 15_000,
    });
    for (const id of ids) expect(await startLag(id), `job ${id}`).toBeLessThan(1_000); // the poll is 120 s away
  });

  it('starts a retried job at its retry time, with no poll to find it', async () => {
    const { client } = countingClient();
    const w = new Worker(client, { queues: ['wake.a'], pollMs: NEVER_MS, heartbeatMs: 60_000 });
    w.handle(Flaky, ({ n }, ctx) => {
      if (ctx.job.attempt === 1) throw new Error('first attempt fails');
      return { n };
    });
    workers.push(w);
    void w.run();
    await listening(1);
    const { id } = await client.enqueue(Flaky, { n: 1 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the retried job' });
    expect(await client.getJob(id)).toMatchObject({ attempt: 2 });
    expect(await startLag(id)).toBeLessThan(1_000); // no poll at all: only the hint starts it this soon
  });
});

describe('stagger and backoff', () => {
  it('spreads the claims of idle peers woken by one hint; exactly one gets the job', async () => {
    const peers = Array.from({ length: 6 }, () => countingClient());
    for (const [i, p] of peers.entries()) await idleWorker(p.client, { staggerMs: 150, registryIntervalMs: 50, workerId: `peer-${i}` });
    await listening(6);
    await sleep(200); // every peer has heard of the others
    const sent = Date.now();
    const { id } = await peers[0]!.client.enqueue(A, { n: 1 });
    await waitFor(() => peers[0]!.client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job' });
    await sleep(300);
    // Each peer's first claim after the hint is the one the hint triggered.
    const first = peers.map(({ claims }) => {
      const i = claims.at.findIndex((t) => t >= sent);
      return { at: claims.at[i]!, got: claims.got[i]! };
    });
    expect(first.every((c) => c.at !== undefined)).toBe(true);
    expect(first.filter((c) => c.got > 0).map((c) => c.got)).toEqual([1]);
    const at = first.map((c) => c.at);
    expect(Math.max(...at) - Math.min(...at)).toBeGreaterThan(15);
  });

  it('does not stagger a worker that has no peers on its queues', async () => {
    const { client } = countingClient();
    await idleWorker(client, { staggerMs: 3_000, registryIntervalMs: 50 });
    await listening(1);
    await sleep(150);
    const sent = Date.now();
    const { id } = await client.enqueue(A, { n: 1 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job' });
    expect(Date.now() - sent).toBeLessThan(1_500); // staggered, it would wait up to 3 s
  });

  it('backs off empty polls without a listener (capped) and resets once a claim succeeds', async () => {
    const { client, claims } = countingClient();
    await idleWorker(client, { listen: false, pollMs: 40, maxPollMs: 400 });
    await sleep(2_000);
    const idleStart = Date.now() - 1_600;
    const idleClaims = claims.at.filter((t) => t >= idleStart).length;
    // Fixed 40 ms polls would be ~40 claims in 1.6 s; backed off to 400 ms, about 4.
    expect(idleClaims).toBeLessThanOrEqual(8);
    const { id } = await client.enqueue(A, { n: 1 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { timeoutMs: 5_000, what: 'the polled job' });
    const found = Date.now();
    // Reset: 40, 80, 160 ms polls follow the claim (280 ms for three); still
    // backed off, three would take 1,200 ms. Waited for, not slept on, so a
    // loaded machine only makes it slower, not wrong.
    const after = await waitFor(() => claims.at.filter((t) => t > found), (at) => at.length >= 3, {
      timeoutMs: 5_000,
      what: 'three polls after the claim',
    });
    expect(after[2]! - found).toBeLessThan(1_200);
  });
});
