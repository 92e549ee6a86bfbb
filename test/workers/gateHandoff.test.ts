// A job held back by a concurrency gate (a concurrency key, or its queue's
// concurrency limit) starts as soon as the job holding the gate ends, not at
// the next safety poll. The worker's claim on a freed slot runs while the
// ended job's settlement is still being written, so it is refused for the
// gate; the settlement must make the worker look again. Here the poll is
// 10 s: six gated 50 ms jobs used to take a poll for most hand-offs.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Keyed = defineJob({ type: 'gh.keyed', schema: z.object({ n: z.number() }), queue: 'keyed' });
const Limited = defineJob({ type: 'gh.limited', schema: z.object({ n: z.number() }), queue: 'limited' });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, namespace: 'gate-handoff', jobs: [Keyed, Limited] });
  await client.admin.setQueueLimits('limited', { concurrencyLimit: 1 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it.each([
  ['a concurrency key', Keyed, { concurrencyKey: 'tenant:1' }],
  ["a queue's concurrency limit", Limited, {}],
] as const)('hands %s to the next job at once', async (_name, def, options) => {
  const starts: number[] = [];
  const worker = new Worker(client, { queues: [def.queue], concurrency: 5, pollMs: 10_000, listen: false });
  worker.handle(def, async () => {
    starts.push(Date.now());
    await new Promise((r) => setTimeout(r, 50));
  });
  await client.enqueueMany(Array.from({ length: 6 }, (_, n) => ({ job: def, payload: { n }, options })));
  const run = worker.run();
  try {
    await waitFor(() => starts.length, (n) => n === 6, { timeoutMs: 8_000, what: 'six gated jobs to start' });
  } finally {
    await worker.stop();
    await run;
  }
  const gaps = starts.slice(1).map((s, i) => s - starts[i]!);
  // One at a time (the gate holds), and each next one within a second of the last start, never a poll later.
  for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(45);
  expect(Math.max(...gaps)).toBeLessThan(1_000);
});
