// The outbox pump's retries back off during a fault even while commits keep
// notifying it. Its role's sessions are read-only here (so every lease
// fails with 25006) while publishes, made by another role, commit and
// notify the pump's LISTEN, which read-only sessions keep: each notification
// started a pass at once, one failed lease per publish (92 in a 5 s fault),
// where the backoff allows a handful. Once writes return, the events are
// delivered.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Client } from '../../src/client/client.js';
import type { FaultReport } from '../../src/faultSpell.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { OutboxPump } from '../../src/outbox/outboxPump.js';
import type { Sink } from '../../src/outbox/sink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { asServerAdmin, createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';
import { sleep, waitFor } from '../helpers/wait.js';

let db: TestDatabase;
let login: RuntimeLogin;
let publisher: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  login = await createRuntimeLogin(db.url, { prefix: 'wh_pump' });
  publisher = new Client({ connectionString: db.url });
});
afterAll(async () => {
  await publisher?.close();
  await login?.drop();
  await db?.drop();
});

it('waits out its backoff between passes while notifications keep coming, then delivers', async () => {
  await asServerAdmin(`alter role ${login.name} set default_transaction_read_only = on`);
  const delivered: string[] = [];
  const sink: Sink = { name: 'collect', deliver: async (e) => void delivered.push(e.id) };
  let failed = 0;
  let ended = 0;
  const faults: FaultReport = { failed: () => void failed++, ok: () => void ended++ };
  // One event due before the pump starts: a lease with nothing to take writes nothing, and would not fail.
  const first = (await publisher.publish('backoff.t', { i: -1 }, { key: 'k' })).id;
  const client = new Client({ connectionString: login.url });
  const pump = new OutboxPump(client, parseOutboxOptions({ sinks: [sink] }), 'test:pump', faults);
  pump.start();
  try {
    await waitFor(() => failed, (n) => n >= 1, { what: 'the first pass to fail on the read-only role' });
    // 40 commits in 2 s, each notifying the pump.
    const ids: string[] = [first];
    for (let i = 0; i < 40; i++) {
      ids.push((await publisher.publish('backoff.t', { i }, { key: 'k' })).id);
      await sleep(50);
    }
    // 0.5 + 1 + 2 s of backoff: a few passes, not one per commit.
    expect(failed).toBeLessThanOrEqual(6);
    await asServerAdmin(`alter role ${login.name} reset default_transaction_read_only`);
    await asServerAdmin(`select pg_terminate_backend(pid) from pg_stat_activity where usename = '${login.name}'`);
    await waitFor(() => delivered.length, (n) => n === ids.length, { what: 'every event to be delivered once writes return', timeoutMs: 20_000 });
    expect(delivered).toEqual(ids);
    // The pass that delivered them ends the fault once it has finished (after its look for the next due event).
    await waitFor(() => ended, (n) => n >= 1, { what: 'the fault to be reported over' });
  } finally {
    await pump.stop();
    await client.close();
  }
}, 60_000);
