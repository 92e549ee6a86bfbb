// A sink of your own that fails with a value that is hard to store (an
// object String() cannot convert, an Error whose message holds a NUL, an
// error thrown before `deliver` returns its promise): the
// event is recorded as failed with a readable last_error, the other events
// of the pass are recorded delivered, and the worker goes on. A sink that
// never answers and ignores its signal fails its event once too little of
// the lease is left (it can go dead), and holds neither a stop nor a hard
// stop of the worker (it held both for ever).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { Worker } from '../../src/worker/worker.js';
import type { Sink } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

const oddSink: Sink = {
  name: 'odd',
  deliver: (event) => {
    if (event.topic === 'odd.sync') throw new Error('thrown before a promise');
    return oddAsync(event.topic);
  },
};

async function oddAsync(topic: string): Promise<void> {
  if (topic === 'odd.nul') throw new Error('refused\u0000here');
  if (topic === 'odd.object') {
    const o = Object.create(null) as Record<string, unknown>;
    o.self = o;
    throw o;
  }
}

describe('a sink that throws odd values', () => {
  it('records those events failed with a readable error and delivers the rest of the pass', async () => {
    const worker = new Worker(client, {
      pollMs: 100,
      scheduleNamespaces: ['sys'],
      outbox: { sinks: [oddSink], maxAttempts: 1, backoff: { baseMs: 50, maxMs: 50 } },
    });
    const run = worker.run();
    try {
      for (const topic of ['odd.ok', 'odd.nul', 'odd.object', 'odd.sync', 'odd.ok']) await client.publish(topic, { topic });
      const rows = await waitFor(
        async () =>
          (await db.pool.query<{ topic: string; state: string; message: string | null }>(
            "select topic, state, last_error->>'message' as message from workhorse.outbox_events order by id",
          )).rows,
        (rs) => rs.length === 5 && rs.every((r) => r.state !== 'pending'),
        { what: 'every event to settle', timeoutMs: 20_000 },
      );
      expect(rows).toEqual([
        { topic: 'odd.ok', state: 'delivered', message: null },
        { topic: 'odd.nul', state: 'dead', message: 'odd: refused\ufffdhere' },
        { topic: 'odd.object', state: 'dead', message: 'odd: [object Object]' },
        { topic: 'odd.sync', state: 'dead', message: 'odd: thrown before a promise' },
        { topic: 'odd.ok', state: 'delivered', message: null },
      ]);
    } finally {
      await worker.stop();
      await run;
    }
  });
});

describe('a sink that never answers and ignores its signal', () => {
  const silentSink: Sink = { name: 'silent', deliver: () => new Promise<void>(() => undefined) };

  it('fails its event when too little of the lease is left to record an answer, so it goes dead', async () => {
    const worker = new Worker(client, {
      pollMs: 100,
      scheduleNamespaces: ['sys'],
      outbox: { sinks: [silentSink], leaseMs: 5000, maxAttempts: 1 },
    });
    const run = worker.run();
    try {
      const { id } = await client.publish('silent.one', {});
      const row = await waitFor(
        async () => (await db.pool.query<{ state: string; message: string | null }>("select state, last_error->>'message' as message from workhorse.outbox_events where id = $1", [id])).rows[0],
        (r) => r?.state === 'dead',
        { what: 'the event to go dead', timeoutMs: 15_000 },
      );
      expect(row!.message).toMatch(/^silent: no answer within \d+ ms \(the outbox lease ends/);
    } finally {
      await worker.stop();
      await run;
    }
  });

  it.each([[{ hard: true }], [{ timeoutMs: 500 }], [{}]] as const)('does not hold worker.stop(%j) while the sys.outbox job waits for it', async (options) => {
    // A database of its own: the job a hard stop aborted is retried with backoff, and holds its slot's gate meanwhile.
    const own = await createTestDatabase();
    const ownClient = new Client({ connectionString: own.url });
    // Six events, one per batch: the pump's passes (at most four at once, beside a slow one) take some
    // and wait on the silent sink, so the sys.outbox job (its first cadence 1 s on) takes another and waits on it too.
    for (let n = 1; n <= 6; n++) await ownClient.publish('silent.stop', { n });
    const worker = new Worker(ownClient, {
      pollMs: 100,
      scheduleNamespaces: ['sys'],
      outbox: { sinks: [silentSink], leaseMs: 60_000, everyMs: 1000, batchSize: 1 },
    });
    const run = worker.run();
    let stopped: Promise<unknown> | undefined;
    try {
      await waitFor(
        async () =>
          (await own.pool.query("select count(*)::int n from workhorse.outbox_events e join workhorse.jobs j on j.type = 'sys.outbox' join workhorse.job_runtime r on r.job_id = j.id where e.leased_by like 'job:' || j.id || ':%'")).rows[0].n,
        (n) => n > 0,
        { what: 'the sys.outbox job to hold the event', timeoutMs: 30_000, intervalMs: 20 },
      );
      const started = Date.now();
      stopped = Promise.all([worker.stop(options), run]);
      await stopped;
      // A hard stop (or a drain turned hard after 500 ms) stops the system worker hard too, at once;
      // a graceful one gives the system worker's job 5 s, then aborts it.
      expect(Date.now() - started).toBeLessThan('hard' in options || 'timeoutMs' in options ? 3_000 : 12_000);
    } finally {
      // Whatever failed above, the worker is stopped (hard) before its client closes.
      if (!stopped) await Promise.all([worker.stop({ hard: true }), run]).catch(() => undefined);
      await ownClient.close();
      await own.drop();
    }
  }, 60_000);
});
