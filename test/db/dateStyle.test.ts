// A database whose DateStyle is not ISO (ALTER DATABASE ... SET datestyle =
// 'SQL, DMY', set by an operator for other software): the driver parses only
// ISO timestamps and read every other one as null. Jobs came back with no
// createdAt or runAt, and the schedule runner, whose database clock read
// null, never fired a slot, without an error. The pools workhorse makes set
// ISO on each connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, defineSchedule, Schedules, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Tickle = defineJob({ type: 'datestyle.tickle', schema: z.object({}).passthrough() });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`alter database ${db.name} set datestyle = 'SQL, DMY'`);
  client = createClient({ connectionString: db.url, jobs: [Tickle] });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('a database whose DateStyle is SQL, DMY', () => {
  it('reads every timestamp of a job as a Date', async () => {
    const { id } = await client.enqueue(Tickle, {}, { delayMs: 60_000 });
    const job = await client.getJob(id);
    expect(job?.createdAt).toBeInstanceOf(Date);
    expect(job?.runAt).toBeInstanceOf(Date);
    expect(job!.runAt!.getTime() - job!.createdAt!.getTime()).toBeGreaterThan(59_000);
  });

  it('fires a schedule every cadence in a worker', async () => {
    await new Schedules(client).define(defineSchedule({ name: 'datestyle.every', job: Tickle, everyMs: 1000 }));
    let runs = 0;
    const worker = new Worker(client, { pollMs: 100, heartbeatMs: 1000, scheduleNamespaces: ['default'] });
    worker.handle(Tickle, () => void runs++);
    const run = worker.run();
    try {
      await waitFor(() => runs, (n) => n >= 2, { what: 'the schedule to fire twice', timeoutMs: 10_000 });
      const [stored] = await new Schedules(client).list();
      expect(stored?.lastFiredAt).toBeInstanceOf(Date);
    } finally {
      await worker.stop();
      await run;
    }
  });
});
