// A failed event is retried after its backoff even while the pass that
// failed it still waits on a slow sink for another event. The pump learned
// of the failure only when the pass ended, and started a pass beside a
// running one only once that had run for a second: with one event hanging,
// a 100 ms backoff became about a second. The pass now tells the pump of
// each failure as it is recorded, and a retry coming due starts a pass at once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { OutboxPump } from '../../src/outbox/outboxPump.js';
import type { Sink } from '../../src/outbox/sink.js';
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

it('retries a failed event after its backoff while another event of the same pass hangs', async () => {
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  const attempts: number[] = [];
  const sink: Sink = {
    name: 'memory',
    deliver: async (e) => {
      if (e.topic === 'hang') return held;
      attempts.push(Date.now());
      if (attempts.length === 1) throw new Error('fails once');
    },
  };
  await client.publish('hang', { n: 1 });
  await client.publish('fails.once', { n: 2 });
  const o = parseOutboxOptions({ sinks: [sink], backoff: { baseMs: 100, maxMs: 100 } });
  const errors: unknown[] = [];
  const pump = new OutboxPump(client, o, 'test:pump', (e) => errors.push(e));
  try {
    pump.start();
    await waitFor(() => attempts.length, (n) => n === 2, { what: 'the retry', timeoutMs: 10_000 });
    // Its backoff is 100 ms; a retry held until the hanging pass counted as slow came about 1 s after the first try.
    expect(attempts[1]! - attempts[0]!).toBeLessThan(800);
    expect(errors).toEqual([]);
  } finally {
    release();
    await pump.stop();
  }
});
