// client.outbox.retry and discard take ids as strings or numbers. A number
// past 2^53 is already another id (9007199254740993 is 9007199254740992 in
// JavaScript), so discard([9007199254740993]) deleted the event before it.
// An unsafe integer is a ValidationError now and changes nothing; the same
// id as a string reaches the right event.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, ValidationError, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, poolMax: 2 });
  // The next events get the ids 2^53 and 2^53 + 1.
  await db.pool.query("select setval(pg_get_serial_sequence('workhorse.outbox_events', 'id'), 9007199254740991)");
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('outbox ids as numbers past 2^53', () => {
  it('are a ValidationError that retries or discards nothing; as strings they reach their own event', async () => {
    const a = await client.publish('order.paid', { n: 'a' });
    const b = await client.publish('order.paid', { n: 'b' });
    expect([a.id, b.id]).toEqual(['9007199254740992', '9007199254740993']);

    for (const call of [() => client.outbox.discard([9007199254740993]), () => client.outbox.retry([2 ** 60])]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).message).toMatch(/safe integer: pass larger ids as strings/);
    }
    // A fraction says what an id is, once (it said "expected string, received number, or expected int, received number").
    const fraction = (await client.outbox.retry([1.5]).catch((e: unknown) => e)) as ValidationError;
    expect(fraction).toBeInstanceOf(ValidationError);
    expect(fraction.message).toBe('invalid event ids: 0: an event id is a string or a whole number (a safe integer: pass larger ids as strings)');
    expect((await client.outbox.list()).map((e) => e.id).sort()).toEqual([a.id, b.id]);

    expect(await client.outbox.discard(['9007199254740993'])).toEqual([b.id]);
    expect((await client.outbox.list()).map((e) => e.id)).toEqual([a.id]);
    // A safe number still works.
    expect(await client.outbox.discard([Number.MAX_SAFE_INTEGER])).toEqual([]);
  });
});
