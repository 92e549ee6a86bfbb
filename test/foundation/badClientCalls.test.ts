// Bad arguments to the client's calls are typed errors that write nothing:
// cancel's options (a truthy string or a typo must not decide whether the
// children are cancelled, nor cancel at all), enqueueMany items that are not
// { job, payload, options }, a `tx` that cannot run queries, outbox ids that
// are not an array, a recovery limit the database would have refused and
// migrate options it does not know;
// and close() may be called twice, after which every call is a
// ClientClosedError, whoever owns the pool.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { ClientClosedError, ConfigError, ValidationError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { countJobs } from './support/rows.js';

const Ping = defineJob({ type: 'ping', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 2 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function refusal(p: Promise<unknown>): Promise<ValidationError> {
  const err = await p.then(
    () => new Error('expected a ValidationError, the call succeeded'),
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

describe('bad client calls', () => {
  it('cancel refuses options that are not { keepChildren?: boolean } and leaves the job as it was', async () => {
    const { id } = await client.enqueue(Ping, { n: 1 });
    for (const bad of [{ keepChildren: 'yes' }, { keepChilds: true }, null, 'keep']) {
      const err = await refusal(client.cancel(id, bad as never));
      expect(err.message).toContain('cancel options');
    }
    expect((await client.getJob(id))!.status).toBe('ready');
    expect((await client.cancel(id, { keepChildren: true })).status).toBe('cancelled');
  });

  it('enqueueMany refuses an item that is not { job, payload, options }, with its index, and writes nothing', async () => {
    const before = await countJobs(db.pool);
    const good = { job: Ping, payload: { n: 1 } };
    for (const bad of [null, 'ping', { payload: { n: 1 } }, { job: 42, payload: {} }, { job: { type: 'ping' }, payload: {} }, { ...good, option: { delayMs: 5 } }]) {
      const err = await refusal(client.enqueueMany([good, bad] as never));
      expect(err.issues[0]!.path[0]).toBe(1);
    }
    await refusal(client.enqueueMany([null] as never));
    // A hole of a sparse array is an item too, refused by its index before any SQL runs.
    const sparse = [good, good, good];
    delete (sparse as unknown[])[1];
    expect((await refusal(client.enqueueMany(sparse))).issues[0]!.path[0]).toBe(1);
    expect((await refusal(client.enqueueMany([{ job: 42, payload: {} }] as never))).message).toContain('job must be a job type name or a defineJob() definition');
    expect(await countJobs(db.pool)).toBe(before);
  });

  it('enqueue refuses a tx that cannot run queries, before anything is written', async () => {
    const before = await countJobs(db.pool);
    for (const tx of [{}, 'client', 5]) {
      const err = await refusal(client.enqueue(Ping, { n: 1 }, { tx: tx as never }));
      expect(err.message).toContain('tx');
    }
    expect(await countJobs(db.pool)).toBe(before);
  });

  it('outbox retry and discard refuse ids that are not an array', async () => {
    for (const ids of ['1', 1, null, { 0: '1' }]) {
      await refusal(client.outbox.retry(ids as never));
      await refusal(client.outbox.discard(ids as never));
    }
  });

  it('recoverExpired refuses a limit that is not a whole number 0-100000 without asking the database', async () => {
    for (const limit of [-1, Number.NaN, 1.5, 'x', 1e9]) {
      const err = await refusal(client.admin.recoverExpired(limit as never));
      expect(err.message).toContain('recovery limit');
    }
    expect(await client.admin.recoverExpired(0)).toBe(0);
  });

  it('signalKey and signal refuse a key or name of "." or ".." (a URL path resolves them away: HTTP could never send it)', async () => {
    for (const bad of ['.', '..']) {
      expect((await refusal(client.signalKey(bad, 'paid', 1))).message).toMatch(/must not be "\." or "\.\."/);
      expect((await refusal(client.signalKey('order:1', bad, 1))).message).toMatch(/must not be "\." or "\.\."/);
      expect((await refusal(client.signal('1', bad, 1))).message).toMatch(/must not be "\." or "\.\."/);
    }
  });

  it('a queue or a worker id of "." or ".." is refused where it is named (no dashboard or HTTP path could pause it)', async () => {
    for (const bad of ['.', '..']) {
      expect(() => defineJob({ type: 'dots', queue: bad, schema: z.object({}) })).toThrow(/must not be "\." or "\.\."/);
      expect((await refusal(client.enqueue(Ping, { n: 1 }, { queue: bad }))).message).toMatch(/must not be "\." or "\.\."/);
      expect(() => new Worker(client, { queues: [bad] })).toThrow(/must not be "\." or "\.\."/);
      expect(() => new Worker(client, { workerId: bad })).toThrow(/must not be "\." or "\.\."/);
      expect((await refusal(client.admin.pauseQueue(bad))).message).toMatch(/must not be "\." or "\.\."/);
    }
  });

  it('migrate refuses an unknown option (a typo left the 60 s default in force)', async () => {
    const err = await refusal(client.migrate({ lockTimeout: 5000 } as never));
    expect(err.message).toContain('lockTimeout');
    await refusal(client.migrate('fast' as never));
    expect((await client.migrate({ lockTimeoutMs: 5000 })).applied).toEqual([]);
  });
});

describe('values that throw when read', () => {
  const AnyJob = defineJob({ type: 'any.value', schema: z.any() });
  const boom = () => {
    throw new Error('getter boom');
  };

  it('a getter or proxy trap that throws in a payload is a ValidationError naming its place (it escaped as the raw Error), and nothing is written', async () => {
    const c = createClient({ connectionString: db.url, jobs: [AnyJob], poolMax: 1 });
    try {
      const getter = { a: { get x() { return boom(); } } };
      const proxy = new Proxy({}, { ownKeys: boom });
      const before = await countJobs(db.pool);
      for (const [what, call] of [
        ['enqueue', () => c.enqueue(AnyJob, getter)],
        ['enqueueMany', () => c.enqueueMany([{ job: AnyJob, payload: getter }])],
        ['publish', () => c.publish('t.x', getter)],
      ] as const) {
        const err = await refusal(call());
        expect(err.message, what).toMatch(/a\.x: reading it threw \(getter boom\)/);
      }
      expect((await refusal(c.enqueue(AnyJob, proxy))).message).toMatch(/reading it threw \(getter boom\)/);
      // The options' tx and the batch's items are read before any schema runs.
      const txGetter = await refusal(c.enqueue(AnyJob, 1, { get tx() { return boom(); } } as never));
      expect(txGetter.issues[0]!.path).toEqual(['options', 'tx']);
      const items = new Proxy([{ job: AnyJob, payload: 1 }], { get: (t, k) => (k === '0' ? boom() : Reflect.get(t, k)) });
      expect((await refusal(c.enqueueMany(items as never))).message).toMatch(/^invalid enqueueMany items: reading it threw \(Error: getter boom\)/);
      expect(await countJobs(db.pool)).toBe(before);
      expect((await db.pool.query('select count(*)::int n from workhorse.outbox_events')).rows[0].n).toBe(0);
    } finally {
      await c.close();
    }
  });

  it("a schema whose own code throws is a ValidationError (not retryable) at enqueue, and a job whose stored payload it throws on fails at once", async () => {
    const Throwing = defineJob({
      type: 'any.refine',
      schema: z.object({ n: z.number() }).refine((v) => (v.n > 1 ? boom() : true)),
      retry: { maxAttempts: 5 },
    });
    const c = createClient({ connectionString: db.url, jobs: [Throwing], poolMax: 2 });
    try {
      const err = await refusal(c.enqueue(Throwing, { n: 2 }));
      expect(err.message).toMatch(/^invalid payload for job type "any\.refine": reading it threw \(Error: getter boom\)/);
      expect((err as ValidationError & { retryable?: boolean }).retryable).toBe(false);
      // Stored by SQL, as a build with a kinder schema would have: the worker's parse throws.
      const { id } = await c.enqueue(Throwing, { n: 1 });
      await db.pool.query(`update workhorse.jobs set payload = '{"n": 3}' where id = $1`, [id]);
      const w = new Worker(c, { queues: ['default'] });
      w.handle(Throwing, async () => 'ran');
      await w.runOnce();
      await w.stop();
      const job = await c.getJob(id);
      expect(job?.status).toBe('failed');
      expect(job?.attempt).toBe(1);
      expect(job?.lastError?.message).toMatch(/reading it threw \(Error: getter boom\)/);
    } finally {
      await c.close();
    }
  });

  it('options whose getter throws are a ConfigError or ValidationError, not the raw Error from inside zod', async () => {
    const getter = { get priority() { return boom(); } };
    const err = await refusal(client.enqueue(Ping, { n: 1 }, getter as never));
    expect(err.message).toMatch(/reading it threw \(Error: getter boom\)/);
    expect(() => new Worker(client, { get concurrency() { return boom(); } } as never)).toThrow(ConfigError);
    expect(() => createClient({ get connectionString() { return boom(); } } as never)).toThrow(/reading it threw \(Error: getter boom\)/);
  });
});

describe('close', () => {
  it('is idempotent: a second close, at once or later, resolves (it threw "Called end on pool more than once")', async () => {
    const c = createClient({ connectionString: db.url, poolMax: 1 });
    await c.getJob('1');
    await Promise.all([c.close(), c.close()]);
    await c.close();
  });

  it('a call after close is a ClientClosedError (pg-pool said only "Cannot use a pool after calling end"), and writes nothing', async () => {
    const c = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 1 });
    const before = await countJobs(db.pool);
    await c.close();
    for (const call of [() => c.enqueue(Ping, { n: 1 }), () => c.getJob('1'), () => c.cancel('1'), () => c.alerts()]) {
      const err = await call().then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ClientClosedError);
      expect(err).toMatchObject({ code: 'closed_client', message: expect.stringMatching(/client was closed/) });
    }
    expect(await countJobs(db.pool)).toBe(before);
  });

  it('ends calls under way at close() as written or as closed: an enqueue started just before it waited 10 s for a connection the ended pool never gave, and failed as "database unavailable"', async () => {
    const c = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 1 });
    const before = await countJobs(db.pool);
    // Each call checks the schema first (not yet checked): that check's connection is being asked for when close() runs.
    const started = [c.enqueue(Ping, { n: 1 }), c.enqueue(Ping, { n: 2 }), c.getJob('1')].map((p) =>
      p.then(
        () => 'written',
        (e: unknown) => (e instanceof ClientClosedError ? 'closed' : e),
      ),
    );
    await c.close();
    const outcomes = await Promise.all(started);
    for (const o of outcomes) expect(['written', 'closed']).toContain(o);
    expect(await countJobs(db.pool)).toBe(before + outcomes.slice(0, 2).filter((o) => o === 'written').length);
    // And the next call is refused as closed.
    await expect(c.getJob('1')).rejects.toBeInstanceOf(ClientClosedError);
  });

  it('fails a call close() had to cut (a statement waiting on a lock past its wait) with ClientClosedError, not as the database lost', async () => {
    const c = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 1 });
    await c.getJob('1');
    const locker = await db.pool.connect();
    try {
      await locker.query('begin; lock table workhorse.jobs in access exclusive mode');
      const stuck = c.enqueue(Ping, { n: 9 }).then(
        () => 'written',
        (e: unknown) => e,
      );
      await new Promise((r) => setTimeout(r, 200));
      await c.close();
      const err = await stuck;
      expect(err).toBeInstanceOf(ClientClosedError);
      expect(err).toMatchObject({ code: 'closed_client' });
      expect((err as { retryable?: boolean }).retryable).not.toBe(true);
    } finally {
      await locker.query('rollback');
      locker.release();
    }
  }, 30_000);

  async function closedRefusal(p: Promise<unknown>): Promise<void> {
    const err = await p.then(
      () => new Error('expected a ClientClosedError, the call succeeded'),
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(ClientClosedError);
  }

  it('a closed client refuses calls in the caller\'s tx (they wrote through it), and migrate() is a ClientClosedError too (it was pg-pool\'s bare error)', async () => {
    const c = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 1 });
    await c.enqueue(Ping, { n: 1 }); // the schema check is cached from here on
    await c.close();
    const before = await countJobs(db.pool);
    const tx = await db.pool.connect();
    try {
      await closedRefusal(c.enqueue(Ping, { n: 1 }, { tx }));
      await closedRefusal(c.enqueueMany([{ job: Ping, payload: { n: 1 } }], { tx }));
      await closedRefusal(c.publish('t', {}, { tx }));
    } finally {
      tx.release();
    }
    await closedRefusal(c.migrate());
    expect(await countJobs(db.pool)).toBe(before);
  });

  it('a client closed over a pool of the caller\'s refuses every call and leaves the pool open (it went on writing)', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 2 });
    try {
      const c = createClient({ pool, jobs: [Ping] });
      await c.getJob('1');
      await c.close();
      const before = await countJobs(db.pool);
      await closedRefusal(c.enqueue(Ping, { n: 1 }));
      await closedRefusal(c.getJob('1'));
      await closedRefusal(c.admin.listWorkers());
      await closedRefusal(c.signalKey('k', 'n', {}));
      await closedRefusal(c.migrate());
      const w = new Worker(c, {});
      w.handle(Ping, async () => 1);
      await closedRefusal(w.runOnce());
      expect(await countJobs(db.pool)).toBe(before);
      expect((await pool.query('select 1 as one')).rows[0]).toEqual({ one: 1 });
    } finally {
      await pool.end();
    }
  });

  it('a call on a pool of yours that you ended is a ClientClosedError (pg-pool refuses the connection), not a refused session', async () => {
    const pool = new pg.Pool({ connectionString: db.url, max: 1 });
    const c = createClient({ pool, jobs: [Ping] });
    await c.getJob('1');
    await pool.end();
    await closedRefusal(c.getJob('1'));
    await c.close();
  });

  it('worker.run() on a closed client rejects with ClientClosedError at once (it retried registering until aborted)', async () => {
    const c = createClient({ connectionString: db.url, jobs: [Ping], poolMax: 1 });
    await c.close();
    const w = new Worker(c, {});
    w.handle(Ping, async () => 1);
    const errors: unknown[] = [];
    w.events.on('error', (e) => errors.push(e));
    const started = Date.now();
    await closedRefusal(w.run(AbortSignal.timeout(10_000)));
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(errors).toEqual([]);
  });
});
