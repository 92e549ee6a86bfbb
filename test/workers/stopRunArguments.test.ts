// worker.stop() takes { hard?: boolean } or { timeoutMs } (a drain that
// turns hard when it passes), and worker.run() an AbortSignal.
// A misspelt option (`{ hrd: true }`) used to be ignored, so the hard stop
// asked for silently became a drain that waits for every handler; a signal
// that is not an AbortSignal threw a bare TypeError. Both are now a
// ValidationError, before anything stops or starts.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ValidationError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Hang = defineJob({ type: 'sr.hang', schema: z.object({}) });
const Quick = defineJob({ type: 'sr.quick', schema: z.object({}) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, namespace: 'stop-run', jobs: [Hang, Quick] });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it('stop({ hrd: true }) is a ValidationError and stops nothing; stop({ hard: true }) then stops at once', async () => {
  const worker = new Worker(client, { listen: false });
  let started = 0;
  worker.handle(Hang, (_p, ctx) => {
    started++;
    return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason), { once: true }));
  });
  await client.enqueue(Hang, {});
  const run = worker.run();
  await waitFor(() => started, (n) => n === 1, { what: 'the handler to start' });
  await expect(worker.stop({ hrd: true } as { hard?: boolean })).rejects.toBeInstanceOf(ValidationError);
  expect(worker.runtimeState()).toMatchObject({ stopping: false, active: 1 });
  const t0 = Date.now();
  await worker.stop({ hard: true });
  await run;
  expect(Date.now() - t0).toBeLessThan(5_000);
});

it('run() with something that is not an AbortSignal is a ValidationError and does not start', async () => {
  const worker = new Worker(client, { listen: false });
  worker.handle(Hang, async () => 1);
  const err = await worker.run({ aborted: false } as unknown as AbortSignal).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(ValidationError);
  expect(worker.runtimeState().running).toBe(false);
  expect(await client.admin.listWorkers()).toEqual([]);
});

it('stop({ timeoutMs }) drains for that long, then stops hard: a handler that ignores its signal ends as a stopped attempt', async () => {
  const worker = new Worker(client, { listen: false, concurrency: 2 });
  let started = 0;
  worker.handle(Hang, () => {
    started++;
    return new Promise(() => undefined); // never ends, ignores its signal
  });
  worker.handle(Quick, async () => {
    started++;
    await new Promise((r) => setTimeout(r, 50));
    return 'done';
  });
  const hang = await client.enqueue(Hang, {});
  const quick = await client.enqueue(Quick, {});
  const run = worker.run();
  await waitFor(() => started, (n) => n === 2, { what: 'both handlers to start' });
  await expect(worker.stop({ hard: true, timeoutMs: 10 })).rejects.toBeInstanceOf(ValidationError);
  await worker.stop({ timeoutMs: 300 });
  await run;
  expect((await client.getJob(quick.id))!.status).toBe('succeeded');
  // Its lease stays until it expires and recovery returns the job.
  // Its attempt ends as a hard stop ends one: a WorkerStoppedError, retried with backoff.
  expect(await client.getJob(hang.id)).toMatchObject({ status: 'ready', attempt: 1, lastError: { code: 'worker_stopped' } });
  expect(await client.admin.listWorkers()).toEqual([]);
});
