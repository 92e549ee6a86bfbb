// A client call the database refuses as read-only (a standby after a
// failover, a database set read-only) fails with DatabaseUnavailableError,
// pg's error as its cause, as a lost connection does: it threw pg's own
// DatabaseError 25006, which callers that catch the typed fault to retry
// missed. Once the database takes writes again the same client writes (the
// read-only session is not lent out again), and so does a client whose pool
// kept other sessions from the read-only spell, alive through reads: each
// failed one write after the database took writes again.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJob } from '../../src/client/defineJob.js';
import { createClient, type Client } from '../../src/client/client.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { onServer } from '../../certify/run.js';
import { serverUrl } from '../helpers/db.js';
import { resetReadOnly, setReadOnly } from '../helpers/readOnly.js';

const Job = defineJob({ type: 'ro.job', schema: z.object({ n: z.number() }) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, poolMax: 2, jobs: [Job] });
});
afterAll(async () => {
  await client?.close();
  await resetReadOnly(db);
  await db?.drop();
});

async function refusal(call: () => Promise<unknown>): Promise<unknown> {
  return call().then(
    () => 'no error',
    (err: unknown) => err,
  );
}

it('enqueue, publish and cancel on a read-only database: DatabaseUnavailableError saying read-only; writes again once it takes them', async () => {
  const { id } = await client.enqueue(Job, { n: 1 });
  await setReadOnly(db, true);
  for (const call of [() => client.enqueue(Job, { n: 2 }), () => client.publish('ro.topic', { n: 3 }), () => client.cancel(id)]) {
    const err = await refusal(call);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as DatabaseUnavailableError).code).toBe('database_unavailable');
    expect((err as Error).message).toMatch(/read-only/);
    expect(((err as Error).cause as { code?: string }).code).toBe('25006');
  }
  // Reads still answer.
  expect((await client.getJob(id))?.status).toBe('ready');
  await setReadOnly(db, false);
  await client.enqueue(Job, { n: 4 });
  expect((await client.cancel(id))).toBeTruthy();
});

it('writes at once after a read-only spell, though its pool kept sessions begun in it (reads kept them alive)', async () => {
  const c = createClient({ connectionString: db.url, poolMax: 4, jobs: [Job] });
  try {
    await c.enqueue(Job, { n: 10 });
    await setReadOnly(db, true);
    // Four reads at once: four sessions begun read-only, back in the pool.
    await Promise.all(Array.from({ length: 4 }, () => c.admin.listQueues()));
    // Writable again, without ending those sessions (a failover's new primary, a setting reset).
    await onServer(serverUrl(), `alter database ${db.name} reset default_transaction_read_only`);
    const outcomes: string[] = [];
    for (let i = 0; i < 6; i++) outcomes.push(await c.enqueue(Job, { n: 20 + i }).then(() => 'ok', (e: unknown) => (e as Error).message));
    expect(outcomes).toEqual(['ok', 'ok', 'ok', 'ok', 'ok', 'ok']);
  } finally {
    await c.close();
  }
});
