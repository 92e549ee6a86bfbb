// A transactional step's body that calls release() on its client (the
// habit pool.connect() teaches) is refused: the connection went back to the
// pool mid-transaction, other callers' statements ran in it, and the step's
// rollback undid their writes (enqueues answered with ids, then lost).
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, ValidationError, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Releaser = defineJob({ type: 'tx.releaser', schema: z.object({}), retry: { maxAttempts: 1 } });
const Other = defineJob({ type: 'tx.other', schema: z.object({ n: z.number() }) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Releaser, Other], poolMax: 3 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it("refuses release() in a step's body, and other callers' writes meanwhile are kept", async () => {
  let refused: unknown;
  let inBody!: () => void;
  const bodyRuns = new Promise<void>((r) => (inBody = r));
  const worker = new Worker(client, { listen: false, pollMs: 50 }).handle(Releaser, (_p, ctx) =>
    ctx.txStep('s', async (tx) => {
      try {
        tx.release();
      } catch (e) {
        refused = e;
      }
      inBody();
      await new Promise((r) => setTimeout(r, 400));
      throw new Error('the body fails, so the step rolls back');
    }),
  );
  const { id } = await client.enqueue(Releaser, {});
  const run = worker.run();
  await bodyRuns;
  const ids = await Promise.all([1, 2, 3, 4, 5].map(async (n) => (await client.enqueue(Other, { n })).id));
  const job = await waitFor(() => client.getJob(id), (j) => j?.status === 'failed', { what: 'the releasing job to fail' });
  await worker.stop();
  await run;
  expect(refused).toBeInstanceOf(ValidationError);
  expect((refused as Error).message).toMatch(/transactional step "s": the body called release\(\) on its client; the step owns the connection/);
  expect((job!.lastError as { message: string }).message).toBe('the body fails, so the step rolls back');
  // Every enqueue answered with an id is there (they ran in the step's transaction and were rolled back with it).
  for (const other of ids) expect(await client.getJob(other)).not.toBeNull();
});
