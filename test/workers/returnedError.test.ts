// A handler that returns an Error instead of throwing it fails its attempt
// as if it had thrown it, as a batch handler's Error outcome does. It
// succeeded with the result {} (what JSON makes of an Error), the error lost.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Once = defineJob({ type: 'returned.error', schema: z.object({}), retry: { maxAttempts: 1 } });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Once] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it('fails the attempt with the returned Error', async () => {
  const worker = new Worker(client, { listen: false });
  worker.handle(Once, async () => new Error('upstream said no'));
  const { id } = await client.enqueue(Once, {});
  expect(await worker.runOnce()).toBe(true);
  await worker.stop();
  const job = await client.getJob(id);
  expect(job).toMatchObject({ status: 'failed', result: null });
  expect(job?.lastError).toMatchObject({ message: 'upstream said no' });
});
