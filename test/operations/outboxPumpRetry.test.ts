// A worker's outbox pump retries an event after its backoff even when the
// failure was another deliverer's: a sys.outbox job, a pass called directly,
// a worker that has since stopped. The pump scheduled a retry only for
// failures of its own passes, so such an event, and every later event of
// its key, waited for the next sys.outbox cadence (60 s by default); in CI
// a worker's pump and its sys.outbox job shared a failing key and the key
// stalled for the test's 45 s. After each pass the pump now asks the
// database when the soonest event it could not lease becomes leasable.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { deliverOutbox } from '../../src/outbox/deliver.js';
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

it("retries after the backoff an event that failed in another deliverer's pass, and the key's later events with it", async () => {
  const first = await client.publish('retry.elsewhere', { n: 1 }, { key: 'k' });
  const second = await client.publish('retry.elsewhere', { n: 2 }, { key: 'k' });
  let failing = true;
  const sent: string[] = [];
  const sink: Sink = {
    name: 'memory',
    deliver: async (e) => {
      if (failing) throw new Error('down');
      sent.push(e.id);
    },
  };
  // Another deliverer's pass fails the first event (backoff 1 s) and leaves the second behind it.
  const o = parseOutboxOptions({ sinks: [sink], backoff: { baseMs: 1000, maxMs: 1000 } });
  expect(await deliverOutbox(client, o, { owner: 'elsewhere' })).toMatchObject({ delivered: 0, retried: 1 });
  failing = false;
  const errors: unknown[] = [];
  const pump = new OutboxPump(client, o, 'test:pump', (e) => errors.push(e));
  const started = Date.now();
  try {
    pump.start();
    // The pump's first passes find nothing leasable; it looks again once the backoff ends (the cadence is 60 s).
    await waitFor(() => sent.length, (n) => n === 2, { what: 'both events delivered', timeoutMs: 10_000 });
    expect(sent).toEqual([first.id, second.id]);
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(errors).toEqual([]);
  } finally {
    await pump.stop();
  }
});
