// A tick's time left is stored (tick_start_v2 takes it as an integer of
// milliseconds) and timed with Node's timers, neither of which holds more
// than 2^31 - 1 ms. A deadline further away (runTick from a caller's own
// code, or a hand-made Lambda context) failed with "the database refused a
// value: ... out of range for type integer", after Node had warned that its
// timers were set to 1 ms. It is a ConfigError naming the deadline now,
// before any connection opens; nothing registers and no job moves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createClient, runTick, type Client } from '../../src/index.js';
import tickApp, { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureApp, freshHandler, scheduledEvent } from './support.js';

const DAY = 86_400_000;

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob], poolMax: 1 });
  await client.enqueue(SleepJob, { ms: 0 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

async function untouched(): Promise<void> {
  const r = await db.pool.query(
    `select (select count(*)::int from workhorse.worker_registry) as workers, (select count(*)::int from workhorse.jobs where status <> 'ready') as moved`,
  );
  expect(r.rows[0]).toEqual({ workers: 0, moved: 0 });
}

describe('a tick deadline more than 2^31 - 1 ms away', () => {
  it('is a ConfigError naming the deadline from runTick, and nothing runs', async () => {
    const err = await runTick({ app: tickApp, connectionString: db.url, deadline: new Date(Date.now() + 30 * DAY) }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).message).toMatch(/^invalid tick timing: the tick has \d+ ms left, more than the longest a tick can run \(2147483647 ms/);
    expect((err as ConfigError).issues[0]!.path).toEqual(['deadline']);
    await untouched();
  });

  it('is the same ConfigError from the Lambda handler given such a time left', async () => {
    const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp });
    await expect(handler(scheduledEvent(), { getRemainingTimeInMillis: () => 1e12 })).rejects.toMatchObject({
      name: 'ConfigError',
      message: expect.stringMatching(/more than the longest a tick can run/),
    });
    await untouched();
  });

  it('still runs a tick whose deadline is 20 days away', async () => {
    const summary = await runTick({ app: tickApp, connectionString: db.url, deadline: new Date(Date.now() + 20 * DAY) });
    expect(summary).toMatchObject({ claimed: 1, succeeded: 1 });
  });
});
