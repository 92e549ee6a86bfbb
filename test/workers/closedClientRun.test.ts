// client.close() while a worker runs on it (close before worker.stop(), the
// reverse of the README's order). Every call of the worker then fails with
// ClientClosedError: its run() used to go on forever, retrying the closed
// client (an error event every few hundred ms) with its handlers still
// running and nothing they did ever settled. Now the loop stops hard: the
// running handlers' signals abort with the ClientClosedError, and run()
// rejects with it; the leases are left to expire and be recovered.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ClientClosedError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Hang = defineJob({ type: 'cc.hang', schema: z.object({}) });

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

it('run() rejects with ClientClosedError soon after the client is closed, aborting the running handler', async () => {
  const client = createClient({ connectionString: db.url, namespace: 'closed-run', jobs: [Hang] });
  const worker = new Worker(client, { heartbeatMs: 5_000 });
  const errors: unknown[] = [];
  worker.events.on('error', (e) => errors.push(e));
  let abortedWith: unknown;
  worker.handle(Hang, (_p, ctx) => {
    return new Promise((_, reject) =>
      ctx.signal.addEventListener(
        'abort',
        () => {
          abortedWith = ctx.signal.reason;
          reject(ctx.signal.reason);
        },
        { once: true },
      ),
    );
  });
  await client.enqueue(Hang, {});
  const run = worker.run();
  await waitFor(() => worker.runtimeState().active, (n) => n === 1, { what: 'the handler to start' });
  await client.close();
  const outcome = await Promise.race([
    run.then(
      () => 'resolved',
      (e: unknown) => e,
    ),
    new Promise((r) => setTimeout(() => r('still running'), 8_000)),
  ]);
  expect(outcome).toBeInstanceOf(ClientClosedError);
  expect(abortedWith).toBeInstanceOf(ClientClosedError);
  // It gave up instead of retrying the closed client: a handful of error events, not a stream.
  const count = errors.length;
  await new Promise((r) => setTimeout(r, 1_000));
  expect(errors.length).toBe(count);
}, 20_000);
