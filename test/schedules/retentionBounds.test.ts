// sys.retention deletes jobs that finished before now() - retentionMs, and
// PostgreSQL's timestamps end about 6,700 years back. A "keep forever"
// retention such as 1e15 ms was accepted by ticks and workers, stored in the
// slot, and every run of sys.retention failed with "timestamp out of range",
// so nothing was ever deleted. Retention is at most 100 years now, refused
// at start with an error naming the option; the longest one still runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createClient, runRetention, runTick, ValidationError, Worker, type Client } from '../../src/index.js';
import tickApp from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const FOREVER = 1e15;
const HUNDRED_YEARS = 3_155_760_000_000;

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, poolMax: 2 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('a retention past what the database can subtract from now', () => {
  it('is refused by runTick, naming retentionMs, and stores no slot', async () => {
    const err = await runTick({ app: tickApp, connectionString: db.url, deadline: new Date(Date.now() + 5000), retentionMs: FOREVER }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/invalid tick options: retentionMs: retention is at most 100 years/);
    const slots = await db.pool.query('select count(*)::int as n from workhorse.schedules');
    expect(slots.rows[0].n).toBe(0);
  });

  it('is refused by a Worker firing sys, naming retentionMs', () => {
    expect(() => new Worker(client, { scheduleNamespaces: ['sys'], retentionMs: FOREVER })).toThrow(/invalid worker options: retentionMs: retention is at most 100 years/);
  });

  it('is a ValidationError from runRetention before any SQL, and 100 years still runs', async () => {
    await expect(runRetention(client, { olderThanMs: FOREVER })).rejects.toBeInstanceOf(ValidationError);
    expect(await runRetention(client, { olderThanMs: HUNDRED_YEARS })).toEqual({ jobs: 0, workers: 0, batches: 1, more: false });
  });
});
