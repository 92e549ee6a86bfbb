// A tick whose database answers but refuses its writes (a read-only spell,
// a standby after a failover) fails with DatabaseUnavailableError, the next
// tick tries again; its message said the tick "could not reach the
// database", sending an operator after the network. It now says the
// database refused the work, with PostgreSQL's reason.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { createClient, defineJob, DatabaseUnavailableError } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Job = defineJob({ type: 'ro.job', schema: z.object({}) });
const app = defineApp({ jobs: [Job], configure: (w) => w.handle(Job, async () => 'ran') });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const client = createClient({ connectionString: db.url, jobs: [Job] });
  await client.enqueue(Job, {});
  await client.close();
  await db.pool.query(`alter database ${db.name} set default_transaction_read_only = on`);
});

afterAll(async () => {
  await db.pool.query(`alter database ${db.name} reset default_transaction_read_only`);
  await db.drop();
});

describe('a tick on a read-only database', () => {
  it('fails with DatabaseUnavailableError saying the database refused the work, not that it could not be reached', async () => {
    const err = await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 5000), scheduleNamespaces: ['default'] }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DatabaseUnavailableError);
    expect((err as Error).message).toMatch(/^the database refused the tick's work: .*read-only transaction.*25006/);
  });
});
