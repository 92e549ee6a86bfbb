// A client's first call, whatever it is, checks the schema's version: a
// read, an operator's write or a signal on a schema of another version is a
// SchemaVersionError, as enqueue already was. Only register, claim,
// enqueue and publish checked: a fresh client paused a queue, set its
// limits and kept a signal on a schema ahead of its code, through
// functions of that other version.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { SchemaVersionError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
const clients: Client[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`insert into workhorse.migrations (version, name) values ($1, 'from_newer_code')`, [SCHEMA_VERSION + 1]);
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.close()));
  await db?.drop();
});

function fresh(): Client {
  const c = createClient({ connectionString: db.url, namespace: 'first-call' });
  clients.push(c);
  return c;
}

const CALLS: [string, (c: Client) => Promise<unknown>][] = [
  ['admin.listJobs', (c) => c.admin.listJobs()],
  ['getJob', (c) => c.getJob(1)],
  ['admin.pauseQueue', (c) => c.admin.pauseQueue('q')],
  ['admin.setQueueLimits', (c) => c.admin.setQueueLimits('q', { concurrencyLimit: 3 })],
  ['admin.listWorkers', (c) => c.admin.listWorkers()],
  ['signalKey', (c) => c.signalKey('order-1', 'paid', {})],
  ['outbox.list', (c) => c.outbox.list()],
  ['alerts', (c) => c.alerts()],
  ['pendingDecisions', (c) => c.pendingDecisions()],
];

describe("a fresh client's first call on a schema ahead of its code", () => {
  it.each(CALLS)('%s is a SchemaVersionError, and writes nothing', async (_name, call) => {
    const err = await call(fresh()).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect((err as Error).message).toContain(`schema version ${SCHEMA_VERSION + 1} is ahead of this code`);
    const written = await db.pool.query(
      "select (select count(*) from workhorse.queues where namespace = 'first-call') + (select count(*) from workhorse.job_signals) as n",
    );
    expect(Number(written.rows[0].n)).toBe(0);
  });

  it('goes through once the schema is at its version', async () => {
    const c = fresh();
    await expect(c.admin.listJobs()).rejects.toBeInstanceOf(SchemaVersionError);
    await db.pool.query('delete from workhorse.migrations where version > $1', [SCHEMA_VERSION]);
    await expect(c.admin.listJobs()).resolves.toEqual({ jobs: [], nextCursor: null });
    await c.admin.pauseQueue('q');
    expect((await c.admin.listQueues()).map((q) => [q.name, q.paused])).toEqual([['q', true]]);
  });
});
