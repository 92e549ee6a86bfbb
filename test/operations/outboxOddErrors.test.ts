// A sink of your own that fails with a value that is hard to store (an
// object String() cannot convert, an Error whose message holds a NUL, an
// error thrown before `deliver` returns its promise): the
// event is recorded as failed with a readable last_error, the other events
// of the pass are recorded delivered, and the worker goes on.
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
