// enqueueMany's items: a `tx` in an item's options is refused, naming the
// item (it was dropped silently, so that item's job committed outside the
// caller's transaction and outlived its rollback); and an item refused for
// something other than its shape (too large, an unknown type) is named by
// its index like a malformed one.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { PayloadTooLargeError, UnknownJobTypeError, ValidationError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Note = defineJob({ type: 'items.note', schema: z.object({ text: z.string() }) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Note], maxPayloadBytes: 1024 });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const jobs = async () => (await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.jobs')).rows[0]!.n;

it("refuses an item's own tx, naming the item, and writes nothing (its job committed outside the caller's transaction)", async () => {
  const tx = await db.pool.connect();
  try {
    await tx.query('begin');
    const options = { tx, priority: 1 };
    const err = (await client.enqueueMany([{ job: Note, payload: { text: 'a' } }, { job: Note, payload: { text: 'b' }, options }]).catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toMatch(/^item 1: .*options\.tx: a transaction is enqueueMany's second argument/);
    expect(err.issues[0]!.path).toEqual([1, 'options', 'tx']);
    // The batch's transaction goes where it belongs, and rolls back with the caller's.
    await client.enqueueMany([{ job: Note, payload: { text: 'c' } }], { tx });
    await tx.query('rollback');
  } finally {
    tx.release();
  }
  expect(await jobs()).toBe(0);
  // enqueue's own options still carry its tx.
  expect((await client.enqueue(Note, { text: 'd' }, { tx: undefined })).created).toBe(true);
});

it('names the item a payload too large or an unknown type came from', async () => {
  const big = await client.enqueueMany([{ job: Note, payload: { text: 'ok' } }, { job: Note, payload: { text: 'x'.repeat(2000) } }]).catch((e: unknown) => e);
  expect(big).toBeInstanceOf(PayloadTooLargeError);
  expect((big as Error).message).toMatch(/^item 1: /);
  const unknown = await client.enqueueMany([{ job: 'items.nope', payload: {} }, { job: Note, payload: { text: 'ok' } }]).catch((e: unknown) => e);
  expect(unknown).toBeInstanceOf(UnknownJobTypeError);
  expect((unknown as Error).message).toMatch(/^item 0: /);
  // A batch of one names its item too, as a ValidationError of it does.
  const alone = await client.enqueueMany([{ job: 'items.nope', payload: {} }]).catch((e: unknown) => e);
  expect(alone).toBeInstanceOf(UnknownJobTypeError);
  expect((alone as Error).message).toMatch(/^item 0: /);
  const bigAlone = await client.enqueueMany([{ job: Note, payload: { text: 'x'.repeat(2000) } }]).catch((e: unknown) => e);
  expect((bigAlone as Error).message).toMatch(/^item 0: /);
});

it("refuses a second argument other than { tx }: a typo such as { transaction } committed the batch outside the caller's transaction", async () => {
  const before = await jobs();
  const tx = await db.pool.connect();
  try {
    await tx.query('begin');
    for (const opts of [{ transaction: tx }, { tx: tx, extra: 1 }, 'x', 5, null]) {
      const err = await client.enqueueMany([{ job: Note, payload: { text: 'typo' } }], opts as never).catch((e: unknown) => e);
      expect(err, typeof opts).toBeInstanceOf(ValidationError);
      expect((err as Error).message).toMatch(/^invalid enqueueMany options/);
    }
    await tx.query('rollback');
  } finally {
    tx.release();
  }
  expect(await jobs()).toBe(before);
});
