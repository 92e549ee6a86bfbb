// The optional Redis wake-up against real Redis servers: the machine's one
// at 127.0.0.1:6379 (every test here uses its own namespace, so its
// channels are its own) and, for an outage, a redis-server this test starts
// and stops itself. With LISTEN off, a Redis hint wakes an idle worker at
// once and a delayed job's hint wakes it at the due time. Redis carries no
// truth: pointed at a closed port, or with its server stopped, enqueues
// still succeed and workers still find the jobs by their safety poll; once
// the server is back, hints wake them again. A URL node-redis cannot use is
// refused when the hints are made, as a ConfigError naming `url`.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { freePort } from '../../src/db/freePort.js';
import { ConfigError, createClient, defineJob, redisWakeHints, Worker, type Client, type RedisWakeHints } from '../../src/index.js';
import { MAX_UNANSWERED_PUBLISHES } from '../../src/worker/redisWakeHints.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Ping = defineJob({ type: 'redis.ping', queue: 'redis', schema: z.object({ n: z.number() }) });
const SHARED_REDIS = 'redis://127.0.0.1:6379';

let db: TestDatabase;
const cleanup: (() => Promise<void>)[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
});

afterEach(async () => {
  for (const fn of cleanup.splice(0).reverse()) await fn();
});

afterAll(async () => {
  await db?.drop();
});


/** A redis-server of this test's own, with no persistence; resolves once it accepts connections. */
async function ownRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += String(d)));
  await waitFor(() => out, (o) => o.includes('Ready to accept connections'), { what: 'redis-server to start' });
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** A client with Redis wake hints on a namespace of its own, and an idle LISTEN-less worker on it. */
async function setup(url: string, pollMs: number): Promise<{ client: Client; hints: RedisWakeHints; worker: Worker; errors: unknown[] }> {
  const errors: unknown[] = [];
  const hints = redisWakeHints({ url, onError: (e) => errors.push(e) });
  const namespace = `redis_${randomBytes(4).toString('hex')}`;
  const client = createClient({ connectionString: db.url, namespace, jobs: [Ping], poolMax: 3, wakeHints: hints });
  const worker = new Worker(client, { queues: ['redis'], listen: false, pollMs, maxPollMs: pollMs, heartbeatMs: 60_000 });
  worker.handle(Ping, ({ n }) => ({ n }));
  cleanup.push(async () => {
    await worker.stop();
    await client.close();
    await hints.close();
  });
  void worker.run();
  await waitFor(() => worker.runtimeState().registered, Boolean, { what: 'registration' });
  return { client, hints, worker, errors };
}

async function timeToSucceed(client: Client, enqueue: () => Promise<{ id: string }>, timeoutMs = 10_000): Promise<number> {
  const t0 = Date.now();
  const { id } = await enqueue();
  await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { timeoutMs, what: `job ${id}` });
  return Date.now() - t0;
}

describe('a short-lived process with Redis wake hints', () => {
  it('sends its hint before it closes, and then ends by itself', async () => {
    // It used to close while its first connection was still being made: the
    // hint was dropped (the job waited for a poll), and the connection made
    // after the close stayed open, so the process never ended.
    const namespace = `exit${randomBytes(3).toString('hex')}`;
    const { createClient: redisClient } = await import('redis');
    const listener = redisClient({ url: SHARED_REDIS });
    await listener.connect();
    const heard: string[] = [];
    await listener.subscribe(`workhorse:${namespace}:redis-exit`, (m) => void heard.push(m));
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', 'test/fixtures/redisEnqueueAndExit.ts', db.url, SHARED_REDIS, namespace], { stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      child.stdout!.on('data', (d) => (out += String(d)));
      child.stderr!.on('data', (d) => (out += String(d)));
      const code = await new Promise<number | string>((resolve) => {
        const timer = setTimeout(() => {
          child.kill('SIGKILL');
          resolve('still running 20 s later');
        }, 20_000);
        child.on('exit', (c) => {
          clearTimeout(timer);
          resolve(c ?? 'killed');
        });
      });
      expect(code, out).toBe(0);
      expect(out).toContain('closed');
      await waitFor(() => heard.length, (n) => n === 1, { what: 'the hint' });
      expect(heard).toEqual(['0']);
    } finally {
      await listener.destroy();
    }
  }, 40_000);
});

describe('the Redis wake-up', () => {
  it('wakes an idle worker with LISTEN off at once, long before its poll', async () => {
    const { client } = await setup(SHARED_REDIS, 60_000);
    await sleep(300); // subscribed
    expect(await timeToSucceed(client, () => client.enqueue(Ping, { n: 1 }))).toBeLessThan(3_000); // its poll is 60 s away
  });

  it('wakes it at a delayed job\'s due time', async () => {
    const { client } = await setup(SHARED_REDIS, 60_000);
    await sleep(300);
    const { id } = await client.enqueue(Ping, { n: 2 }, { delayMs: 800 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the delayed job' });
    const r = await db.pool.query<{ ms: number }>(`select extract(epoch from started_at - run_at) * 1000 as ms from workhorse.jobs where id = $1`, [id]);
    expect(Number(r.rows[0]!.ms)).toBeLessThan(1_000); // its poll is 60 s away
  });

  it('changes nothing but latency when Redis is not there: enqueues succeed, the poll finds the jobs', async () => {
    const { client, errors } = await setup(`redis://127.0.0.1:${await freePort()}`, 300);
    const ms = await timeToSucceed(client, () => client.enqueue(Ping, { n: 3 }));
    expect(ms).toBeLessThan(2_000);
    await waitFor(() => errors.length, (n) => n >= 1, { what: 'the outage to be reported' });
    expect(errors.length).toBeLessThanOrEqual(2); // once per connection, not once per reconnect attempt
  });

  it('falls back to the poll while its Redis server is stopped, and wakes by hint again once it is back', async () => {
    const port = await freePort();
    let redis = await ownRedis(port);
    cleanup.push(() => stopRedis(redis));
    const { client } = await setup(`redis://127.0.0.1:${port}`, 1_500);
    await sleep(300);
    expect(await timeToSucceed(client, () => client.enqueue(Ping, { n: 4 }))).toBeLessThan(500);

    await stopRedis(redis);
    const during = await timeToSucceed(client, () => client.enqueue(Ping, { n: 5 }));
    expect(during).toBeLessThan(3_500); // the poll (1.5 s), not the hint

    redis = await ownRedis(port);
    // Resubscribed (and woken once for what it may have missed) within the reconnect backoff.
    await sleep(3_000);
    expect(await timeToSucceed(client, () => client.enqueue(Ping, { n: 6 }))).toBeLessThan(500);
  });

  it('keeps at most MAX_UNANSWERED_PUBLISHES hints waiting on a Redis that is connected but frozen, and reports it once', async () => {
    const port = await freePort();
    const redis = await ownRedis(port);
    cleanup.push(async () => {
      redis.kill('SIGCONT');
      await stopRedis(redis);
    });
    const errors: unknown[] = [];
    const hints = redisWakeHints({ url: `redis://127.0.0.1:${port}`, onError: (e) => errors.push(e) });
    cleanup.push(() => hints.close());
    // Connected both ways: a hint published comes back to a subscriber.
    let heard = 0;
    hints.subscribe('frozen', ['q'], () => heard++, () => undefined);
    await waitFor(
      () => (hints.publish('frozen', [{ queue: 'q', dueInMs: 0 }]), heard),
      (n) => n > 0,
      { what: 'a hint to go round' },
    );
    await waitFor(() => hints.unansweredPublishes, (n) => n === 0, { what: 'the publishes to be answered' });

    redis.kill('SIGSTOP'); // the connection stays open; nothing answers
    for (let i = 0; i < MAX_UNANSWERED_PUBLISHES * 3; i++) hints.publish('frozen', [{ queue: 'q', dueInMs: 0 }]);
    expect(hints.unansweredPublishes).toBe(MAX_UNANSWERED_PUBLISHES);
    expect(errors.map(String)).toEqual([expect.stringContaining(`${MAX_UNANSWERED_PUBLISHES} publishes unanswered`)]);

    redis.kill('SIGCONT');
    await waitFor(() => hints.unansweredPublishes, (n) => n === 0, { what: 'the queued publishes to be answered' });
    hints.publish('frozen', [{ queue: 'q', dueInMs: 0 }]);
    expect(hints.unansweredPublishes).toBe(1);
    expect(errors).toHaveLength(1);
  });
});

describe('redisWakeHints({ url })', () => {
  it.each([
    ['host:port without a scheme', 'localhost:6379'],
    ['another scheme', 'http://127.0.0.1:6379'],
    ['a PostgreSQL URL', 'postgres://postgres@127.0.0.1:5432/test'],
    ['no host', 'redis://'],
    ['a database that is not a number', 'redis://127.0.0.1:6379/zero'],
    ['a port out of range', 'redis://127.0.0.1:70000'],
    ['garbage', 'not a url at all'],
    ['an empty string', ''],
  ])('refuses %s with a ConfigError naming url, before any connection', (_what, url) => {
    const err = (() => {
      try {
        redisWakeHints({ url });
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues.map((i) => i.path.join('.'))).toEqual(['url']);
    expect((err as ConfigError).message).toMatch(/^invalid redis wake hints: url: not a Redis URL: expected redis:\/\//);
  });

  it.each([
    ['a connect timeout past a minute (a timer past 2^31 ms fires at once)', { url: SHARED_REDIS, connectTimeoutMs: 3_000_000_000 }, 'connectTimeoutMs'],
    ['a misspelt option', { url: SHARED_REDIS, connectTimeout: 5_000 }, '(root)'],
  ])('refuses %s with a ConfigError', (_what, options, path) => {
    expect(() => redisWakeHints(options as never)).toThrow(ConfigError);
    expect(() => redisWakeHints(options as never)).toThrow(new RegExp(`^invalid redis wake hints: ${path.replace(/[()]/g, '\\$&')}: `));
  });

  it('refuses a missing url with a ConfigError naming url', () => {
    expect(() => redisWakeHints({} as never)).toThrow(ConfigError);
    expect(() => redisWakeHints({} as never)).toThrow(/^invalid redis wake hints: url: /);
  });

  it.each(['redis://127.0.0.1:6379', 'redis://user:secret@127.0.0.1:6379/2', 'rediss://cache.example.com', 'redis://[::1]:6379/'])(
    'accepts %s (it connects only when first used)',
    async (url) => {
      const hints = redisWakeHints({ url });
      expect(hints.options.url).toBe(url);
      await hints.close();
    },
  );
});
