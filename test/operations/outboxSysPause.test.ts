// Pausing the sys queue holds outbox delivery, as the docs say: the sys
// slots' job (sys.outbox) waited, but a worker's pump kept delivering after
// each commit, so an operator pausing sys to stop a webhook storm stopped
// nothing. Leasing now hands out no event while sys is paused, and resuming
// sys wakes the deliverers, so held events go out at once, not at the next
// cadence.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { OutboxPump } from '../../src/outbox/outboxPump.js';
import type { Sink } from '../../src/outbox/sink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

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

it('delivers nothing while sys is paused, and the held events once it is resumed', async () => {
  const delivered: string[] = [];
  const sink: Sink = { name: 'memory', deliver: async (e) => void delivered.push(e.topic) };
  const errors: unknown[] = [];
  const pump = new OutboxPump(client, parseOutboxOptions({ sinks: [sink] }), 'test:pump', (e) => errors.push(e));
  try {
    pump.start();
    await client.publish('before.pause', {});
    await waitFor(() => delivered.length, (n) => n === 1, { what: 'delivery before the pause' });

    await client.admin.pauseQueue('sys');
    await client.publish('during.pause', {});
    await client.publish('during.pause', {}, { key: 'k' });
    await sleep(1_500);
    expect(delivered).toEqual(['before.pause']);
    const held = await client.outbox.list({ state: 'pending' });
    expect(held.map((e) => e.topic)).toEqual(['during.pause', 'during.pause']);

    // No publish after the resume: the resume itself wakes the pump.
    await client.admin.resumeQueue('sys');
    await waitFor(() => delivered.length, (n) => n === 3, { what: 'the held events after the resume', timeoutMs: 10_000 });
    expect(errors).toEqual([]);
  } finally {
    await pump.stop();
  }
});
