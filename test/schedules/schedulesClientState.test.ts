// The Schedules API answers a closed client and an unmigrated database as
// every other client call does: ClientClosedError (whoever owns the pool,
// and nothing is changed) and SchemaVersionError saying to migrate, not
// pg's bare `schema "workhorse" does not exist` or pg-pool's
// "Cannot use a pool after calling end on the pool".
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ClientClosedError, SchemaVersionError } from '../../src/errors.js';
import { defineSchedule } from '../../src/schedules/defineSchedule.js';
import { Schedules } from '../../src/schedules/schedules.js';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Report = defineJob({ type: 'scs.report', schema: z.object({}) });
const nightly = defineSchedule({ name: 'scs.nightly', job: Report, everyMs: 60_000 });

type Call = [string, (s: Schedules) => Promise<unknown>];
const calls: Call[] = [
  ['list', (s) => s.list()],
  ['get', (s) => s.get('scs.nightly')],
  ['enable', (s) => s.enable('scs.nightly')],
  ['disable', (s) => s.disable('scs.nightly')],
  ['delete', (s) => s.delete('scs.nightly')],
  ['define', (s) => s.define(nightly)],
];

describe('on a closed client whose pool is the caller\'s', () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  let schedules: Schedules;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 2 });
    const client = createClient({ pool, namespace: 'scs', jobs: [Report] });
    await new Schedules(client).define(nightly);
    await client.close();
    schedules = new Schedules(client);
  });

  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it.each(calls)('%s is a ClientClosedError', async (_name, call) => {
    await expect(call(schedules)).rejects.toBeInstanceOf(ClientClosedError);
  });

  it('and changes nothing: the slot is still there, enabled', async () => {
    const r = await db.pool.query('select enabled from workhorse.schedules where namespace = $1 and name = $2', ['scs', 'scs.nightly']);
    expect(r.rows).toEqual([{ enabled: true }]);
  });
});

it.each(calls)('on a closed client whose pool it made, %s is a ClientClosedError', async (_name, call) => {
  const client = createClient({ connectionString: 'postgres://postgres@127.0.0.1:1/none', jobs: [Report] });
  await client.close();
  await expect(call(new Schedules(client))).rejects.toBeInstanceOf(ClientClosedError);
});

describe('on a database that was never migrated', () => {
  let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
  let client: ReturnType<typeof createClient>;

  beforeAll(async () => {
    db = await createEmptyDatabase();
    client = createClient({ connectionString: db.url, poolMax: 2, jobs: [Report] });
  });

  afterAll(async () => {
    await client?.close();
    await db?.drop();
  });

  it.each(calls)('%s is a SchemaVersionError saying to migrate', async (_name, call) => {
    const err = await call(new Schedules(client)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaVersionError);
    expect((err as Error).message).toMatch(/workhorse schema not found: run `workhorse migrate`/);
  });
});
