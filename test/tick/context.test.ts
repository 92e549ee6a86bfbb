// The tick handler's Lambda context is its deadline, so it is checked before
// anything runs: no context, one without getRemainingTimeInMillis (a caller's
// stand-in for Lambda's), or one whose time left is not a finite number is a
// ValidationError naming it; no worker registers and no job is claimed.
// A real context, as small as a tick allows, still runs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/index.js';
import { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureApp, freshHandler, lambdaContext, scheduledEvent } from './support.js';

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

describe('the tick handler’s context', () => {
  const bad: [string, unknown, RegExp][] = [
    ['no context', undefined, /invalid tick context: \(root\): Invalid input: expected object/],
    ['a context without getRemainingTimeInMillis', { awsRequestId: 'r-1' }, /invalid tick context: getRemainingTimeInMillis: expected a function/],
    ['a time left that is not a number', { getRemainingTimeInMillis: () => undefined }, /invalid tick context: getRemainingTimeInMillis\(\): expected the milliseconds left/],
    ['a time left of NaN', { getRemainingTimeInMillis: () => Number.NaN }, /invalid tick context: getRemainingTimeInMillis\(\): expected the milliseconds left/],
  ];
  for (const [what, context, message] of bad) {
    it(`refuses ${what} with a ValidationError and runs nothing`, async () => {
      const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp });
      await expect(handler(scheduledEvent(), context as never)).rejects.toMatchObject({ name: 'ValidationError', message: expect.stringMatching(message) });
      await untouched();
    });
  }

  it('runs with a real context', async () => {
    const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp });
    expect(await handler(scheduledEvent(), lambdaContext(3000))).toMatchObject({ claimed: 1, succeeded: 1 });
  });
});
