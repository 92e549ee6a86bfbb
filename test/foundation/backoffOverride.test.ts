// A per-enqueue backoff overrides the fields it gives and keeps the
// definition's others. The option was parsed with the library's defaults,
// so `{ maxMs: 10000 }` on a job whose policy is fixed 5 s stored an
// exponential policy from 1 s, and `{}` reset the whole policy.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ValidationError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Fixed = defineJob({ type: 'bo.fixed', schema: z.object({}), retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 5000, maxMs: 5000 } } });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Fixed] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const policy = async (id: string) =>
  (await db.pool.query('select backoff_kind kind, backoff_base_ms "baseMs", backoff_max_ms "maxMs" from workhorse.jobs where id = $1', [id])).rows[0];

it.each([
  [{}, { kind: 'fixed', baseMs: 5000, maxMs: 5000 }],
  [{ maxMs: 10_000 }, { kind: 'fixed', baseMs: 5000, maxMs: 10_000 }],
  [{ kind: 'exponential' as const }, { kind: 'exponential', baseMs: 5000, maxMs: 5000 }],
  [{ kind: 'linear' as const, baseMs: 100, maxMs: 200 }, { kind: 'linear', baseMs: 100, maxMs: 200 }],
])('enqueue with backoff %j keeps the definition\'s other fields', async (backoff, stored) => {
  const { id } = await client.enqueue(Fixed, {}, { backoff });
  expect(await policy(id)).toEqual(stored);
});

it("refuses a baseMs above the definition's maxMs, saying whose maxMs it is", async () => {
  const err = await client.enqueue(Fixed, {}, { backoff: { baseMs: 6000 } }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ValidationError);
  expect((err as Error).message).toMatch(/backoff\.baseMs: baseMs \(6000\) must not exceed maxMs \(5000, the definition's\)/);
});
