// A running job an operator cancels: its worker finds the lease gone at the
// next heartbeat, aborts the handler, and (with no `stale` listener) logs one
// line. The line listed every cause a lease can be lost to, a database crash
// among them, for a plain cancel; the worker now reads the job's status and
// says that an operator cancelled it.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Long = defineJob({ type: 'cancel.long', schema: z.object({}) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Long], poolMax: 4 });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});
afterEach(() => vi.restoreAllMocks());

describe('a running job cancelled by an operator', () => {
  it('is logged as cancelled by an operator, not as a lease lost to recovery or a crash', async () => {
    const lines: string[] = [];
    vi.spyOn(console, 'error').mockImplementation((...a: unknown[]) => void lines.push(a.map(String).join(' ')));
    const { id } = await client.enqueue(Long, {});
    let started = false;
    const worker = new Worker(client, { workerId: 'canceller', heartbeatMs: 200, pollMs: 50, listen: false }).handle(Long, async (_p, ctx) => {
      started = true;
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
    });
    const run = worker.run();
    try {
      await waitFor(() => started, Boolean, { what: 'the handler to start' });
      expect((await client.cancel(id)).status).toBe('cancelled');
      const line = await waitFor(
        () => lines.find((l) => l.includes(`job ${id} (cancel.long) lost its lease`)),
        Boolean,
        { what: 'the lost-lease line', timeoutMs: 10_000 },
      );
      expect(line).toMatch(/; what this attempt does is discarded: an operator cancelled the job$/);
    } finally {
      await worker.stop();
      await run;
    }
  });
});
