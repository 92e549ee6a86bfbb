// A batch handler that throws a value that is not an Error fails every
// member with that value as thrown: a plain object marked
// `retryable: false` ends them failed at once, and an object String()
// cannot convert is stored as what it is, not as the TypeError of
// formatting it. One whose prototype cannot be read (a revoked Proxy) fails
// them with an Error saying so instead of ending the worker process.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Batched = defineJob({
  type: 'batchthrow.run',
  schema: z.object({ kind: z.enum(['permanent', 'noPrototype', 'revokedProxy']) }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Batched], poolMax: 4 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

async function runBatch(kind: 'permanent' | 'noPrototype' | 'revokedProxy', thrown: () => unknown) {
  const ids = (await client.enqueueMany([1, 2].map(() => ({ job: Batched, payload: { kind } })))).map((r) => r.id);
  const worker = new Worker(client, { concurrency: 2, pollMs: 50 }).handleBatch(
    Batched,
    async () => {
      throw thrown();
    },
    { maxBatch: 2 },
  );
  const run = worker.run();
  try {
    return await waitFor(
      () => Promise.all(ids.map((id) => client.getJob(id))),
      (js) => js.every((j) => j!.status === 'failed'),
      { what: 'both members to fail' },
    );
  } finally {
    await worker.stop();
    await run;
  }
}

describe('a batch handler that throws a non-Error', () => {
  it('keeps retryable: false, so the members fail at once', async () => {
    const jobs = await runBatch('permanent', () => ({ retryable: false, reason: 'quota' }));
    expect(jobs.map((j) => [j!.status, j!.attempt])).toEqual([
      ['failed', 1],
      ['failed', 1],
    ]);
    expect(jobs[0]!.lastError).toEqual({ name: 'NonError', message: '{"retryable":false,"reason":"quota"}' });
  });

  it('stores an object without a prototype as itself', async () => {
    const jobs = await runBatch('noPrototype', () => {
      const o = Object.create(null) as Record<string, unknown>;
      o.self = o;
      return o;
    });
    expect(jobs.map((j) => j!.lastError)).toEqual([
      { name: 'NonError', message: '[object Object]' },
      { name: 'NonError', message: '[object Object]' },
    ]);
  });

  it('fails the members of a batch that threw a revoked Proxy, and the worker goes on', async () => {
    const jobs = await runBatch('revokedProxy', () => {
      const { proxy, revoke } = Proxy.revocable({}, {});
      revoke();
      return proxy;
    });
    for (const j of jobs) {
      expect(j!.status).toBe('failed');
      expect((j!.lastError as { message: string }).message).toMatch(/a value that cannot be read/);
    }
  });
});
