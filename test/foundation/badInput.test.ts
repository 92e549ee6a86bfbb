// Foundation (9): bad input gets a typed error that names the problem, and
// nothing is written — a payload failing its zod schema, an unknown job
// type, a negative delay, a payload over the documented size limit.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { DEFAULT_MAX_PAYLOAD_BYTES } from '../../src/client/enqueueInput.js';
import { ConfigError, PayloadTooLargeError, UnknownJobTypeError, ValidationError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { countJobs } from './support/rows.js';

const SendEmail = defineJob({
  type: 'email.send',
  schema: z.object({ to: z.string().email(), subject: z.string().min(1), body: z.string().optional() }),
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SendEmail], poolMax: 2 });
});

afterEach(async () => {
  // Every test in this file is about writing nothing.
  expect(await countJobs(db.pool)).toBe(0);
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('bad input', () => {
  it('rejects a payload that fails its zod schema with a ValidationError naming each bad field', async () => {
    const err = await client.enqueue(SendEmail, { to: 'not-an-email', subject: '' } as never).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    const v = err as ValidationError;
    expect(v.code).toBe('validation_failed');
    expect(v.message).toContain('payload for job type "email.send"');
    expect(v.issues.map((i) => i.path)).toEqual([['to'], ['subject']]);
    expect(v.message).toMatch(/to: /);
    expect(v.message).toMatch(/subject: /);
  });

  it('rejects a missing payload field with its path', async () => {
    const err = (await client.enqueue(SendEmail, { to: 'a@example.com' } as never).catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.issues).toEqual([expect.objectContaining({ path: ['subject'] })]);
  });

  it('rejects an unknown job type with UnknownJobTypeError naming the type', async () => {
    const err = (await client.enqueue('email.sned', { to: 'a@example.com', subject: 'hi' }).catch((e: unknown) => e)) as UnknownJobTypeError;
    expect(err).toBeInstanceOf(UnknownJobTypeError);
    expect(err.code).toBe('unknown_job_type');
    expect(err.type).toBe('email.sned');
    expect(err.message).toContain('"email.sned"');
  });

  it('rejects a negative delay with a ValidationError on delayMs', async () => {
    const err = (await client
      .enqueue(SendEmail, { to: 'a@example.com', subject: 'hi' }, { delayMs: -5 })
      .catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.issues).toEqual([expect.objectContaining({ path: ['delayMs'], message: 'delayMs must not be negative' })]);
  });

  it.each([
    ['delayMs', 1e20, /<=315360000000/],
    ['delayMs', -1e20, /^delayMs must not be negative$/],
    ['priority', 1e20, /<=32767/],
    ['maxAttempts', 1e20, /<=1000/],
    ['timeoutMs', 1e20, /<=2147483647/],
    ['timeoutMs', 1.5, /expected int/],
  ] as const)('reports %s: %d out of range as one issue naming its bound', async (field, value, message) => {
    const err = (await client
      .enqueue(SendEmail, { to: 'a@example.com', subject: 'hi' }, { [field]: value })
      .catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.issues).toHaveLength(1);
    expect(err.issues[0]).toMatchObject({ path: [field], message: expect.stringMatching(message) });
  });

  it('rejects unknown and malformed options with a ValidationError', async () => {
    const ok = { to: 'a@example.com', subject: 'hi' };
    await expect(client.enqueue(SendEmail, ok, { priority: 1.5 })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.enqueue(SendEmail, ok, { maxAttempts: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.enqueue(SendEmail, ok, { queue: 'bad queue name!' })).rejects.toBeInstanceOf(ValidationError);
    // Refused by the type as by the runtime.
    // @ts-expect-error runAt and delayMs together
    await expect(client.enqueue(SendEmail, ok, { delayMs: 10, runAt: new Date() })).rejects.toBeInstanceOf(ValidationError);
    await expect(client.enqueue(SendEmail, ok, { runAt: '2030-01-01T00:00:00Z' } as never)).rejects.toThrow(/runAt: must be a Date, not a string/);
    const unknownOption = (await client.enqueue(SendEmail, ok, { prio: 1 } as never).catch((e: unknown) => e)) as ValidationError;
    expect(unknownOption).toBeInstanceOf(ValidationError);
    expect(unknownOption.message).toContain('prio');
  });

  it(`rejects a payload over the documented limit (DEFAULT_MAX_PAYLOAD_BYTES = ${DEFAULT_MAX_PAYLOAD_BYTES} bytes) with PayloadTooLargeError`, async () => {
    expect(DEFAULT_MAX_PAYLOAD_BYTES).toBe(256 * 1024);
    const body = 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES);
    const err = (await client.enqueue(SendEmail, { to: 'a@example.com', subject: 'big', body }).catch((e: unknown) => e)) as PayloadTooLargeError;
    expect(err).toBeInstanceOf(PayloadTooLargeError);
    expect(err.code).toBe('payload_too_large');
    expect(err.limit).toBe(DEFAULT_MAX_PAYLOAD_BYTES);
    expect(err.bytes).toBeGreaterThan(DEFAULT_MAX_PAYLOAD_BYTES);
    expect(err.message).toContain('"email.send"');
    expect(err.message).toContain(`limit is ${DEFAULT_MAX_PAYLOAD_BYTES} bytes`);
  });

  it("enforces a client's own maxPayloadBytes", async () => {
    const small = createClient({ connectionString: db.url, jobs: [SendEmail], maxPayloadBytes: 100, poolMax: 1 });
    try {
      const err = (await small
        .enqueue(SendEmail, { to: 'a@example.com', subject: 'hi', body: 'y'.repeat(100) })
        .catch((e: unknown) => e)) as PayloadTooLargeError;
      expect(err).toBeInstanceOf(PayloadTooLargeError);
      expect(err.limit).toBe(100);
    } finally {
      await small.close();
    }
  });

  it('writes nothing from an enqueueMany batch with one bad item, and names the item', async () => {
    const good = { job: SendEmail, payload: { to: 'a@example.com', subject: 'ok' } };
    const err = (await client
      .enqueueMany([good, good, { job: SendEmail, payload: { to: 'nope', subject: 'x' } }, good])
      .catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain('item 2');
    expect(err.issues[0]!.path).toEqual([2, 'to']);
  });

  it('names the item of a one-item enqueueMany batch too (enqueue itself names no index)', async () => {
    const err = (await client.enqueueMany([{ job: SendEmail, payload: { to: 'nope', subject: 'x' } }]).catch((e: unknown) => e)) as ValidationError;
    expect(err).toBeInstanceOf(ValidationError);
    expect(err.message).toContain('item 0');
    expect(err.issues[0]!.path).toEqual([0, 'to']);
    const odd = (await client.enqueueMany([{ job: SendEmail, payload: {}, extra: 1 } as never]).catch((e: unknown) => e)) as ValidationError;
    expect(odd.issues[0]!.path[0]).toBe(0);
    const single = (await client.enqueue(SendEmail, { to: 'nope', subject: 'x' }).catch((e: unknown) => e)) as ValidationError;
    expect(single.issues[0]!.path).toEqual(['to']);
  });

  it('rejects bad client options and job definitions with ConfigError', () => {
    expect(() => createClient({ connectionString: db.url, namespace: 'has space' })).toThrow(ConfigError);
    expect(() => createClient({} as never)).toThrow(ConfigError);
    expect(() => defineJob({ type: 'bad type', schema: z.object({}) })).toThrow(ConfigError);
  });

  it('names what a bad payload belongs to: a job type, an outbox topic or a signal', async () => {
    const published = (await client.publish('orders.paid', { amount: 1n } as never).catch((e: unknown) => e)) as ValidationError;
    expect(published).toBeInstanceOf(ValidationError);
    expect(published.message).toContain('payload for topic "orders.paid"');
    expect(published.message).not.toContain('job type');
    const big = 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES);
    const signalled = (await client.signalKey('order:1', 'paid', { big }).catch((e: unknown) => e)) as PayloadTooLargeError;
    expect(signalled).toBeInstanceOf(PayloadTooLargeError);
    expect(signalled.message).toMatch(/^payload of signal "paid" is \d+ bytes; the limit is 262144 bytes$/);
    const outbox = await db.pool.query('select count(*)::int as n from workhorse.outbox_events');
    expect(outbox.rows[0].n).toBe(0);
  });
});
