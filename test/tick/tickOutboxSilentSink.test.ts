// A tick's delivery pass fails an event whose sink does not answer before
// the tick's claim window closes. It released the event untouched instead
// (the window's end aborted the pass, which is how a stop is told from a
// failure), so the event was never charged an attempt, never went dead,
// held back its key for ever and made every tick wait out its window.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { defineApp } from '../../src/app/defineApp.js';
import { Client } from '../../src/client/client.js';
import type { Sink } from '../../src/outbox/sink.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

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

it('charges an attempt to an event its sink leaves unanswered at the window, and dead-letters it after maxAttempts', async () => {
  let calls = 0;
  // Never answers and ignores its signal.
  const silent: Sink = { name: 'silent', deliver: () => (calls++, new Promise<void>(() => undefined)) };
  const app = defineApp({ jobs: [], configure: () => undefined, outbox: { sinks: [silent], maxAttempts: 2, backoff: { baseMs: 0, maxMs: 0 } } });
  const { id } = await client.publish('silent.tick', { n: 1 }, { key: 'k' });
  const state = async () =>
    (await db.pool.query<{ state: string; attempts: number }>('select state, attempts from workhorse.outbox_events where id = $1', [id])).rows[0];
  for (const expected of [
    { state: 'pending', attempts: 1 },
    { state: 'dead', attempts: 2 },
  ]) {
    const deadline = Date.now() + 4_000;
    const summary = await runTick({ app, connectionString: db.url, deadline: new Date(deadline), scheduleNamespaces: ['sys'] });
    expect(summary.msLeft).toBeGreaterThan(0);
    expect(await state()).toEqual(expected);
  }
  expect(calls).toBe(2);
  // The error names what cut the wait short: the tick's window, not the outbox lease (60 s).
  const error = await db.pool.query<{ message: string }>('select last_error->>\'message\' as message from workhorse.outbox_events where id = $1', [id]);
  expect(error.rows[0]!.message).toMatch(/^silent: no answer within \d+ ms \(the pass's time ends \(a tick's window, or the deadline given\)\)$/);
});

it("releases its in-flight events and returns when the tick is told to stop mid-delivery, charging no attempt", async () => {
  await db.pool.query('delete from workhorse.outbox_events');
  // Slow, but honours its signal; the tick is told to stop 200 ms into the first delivery.
  let calls = 0;
  const slow: Sink = {
    name: 'slow',
    deliver: (_e, signal) =>
      new Promise<void>((resolve, reject) => {
        if (calls++ === 0) setTimeout(() => stop.abort(), 200);
        const t = setTimeout(resolve, 3_000);
        signal.addEventListener('abort', () => (clearTimeout(t), reject(signal.reason)), { once: true });
      }),
  };
  const stop = new AbortController();
  const app = defineApp({ jobs: [], configure: () => undefined, outbox: { sinks: [slow], concurrency: 1 } });
  for (let n = 0; n < 6; n++) await client.publish('slow.tick', { n });
  const started = Date.now();
  await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 30_000), scheduleNamespaces: ['sys'], signal: stop.signal });
  expect(calls).toBe(1);
  expect(Date.now() - started).toBeLessThan(5_000);
  const rows = await db.pool.query<{ state: string; attempts: number; leased: boolean }>(
    'select state, attempts, leased_by is not null leased from workhorse.outbox_events order by id',
  );
  expect(rows.rows.every((r) => r.state === 'pending' && r.attempts === 0 && !r.leased)).toBe(true);
});
