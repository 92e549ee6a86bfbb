// `workhorse tick`: one tick from a shell (or a cron line on a VM), its
// summary printed as one JSON line.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { createClient, type Client } from '../../src/index.js';
import { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureApp } from './support.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SleepJob], poolMax: 2 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

function capture() {
  const out: string[] = [];
  const err: string[] = [];
  return { io: { out: (l: string) => out.push(l), err: (l: string) => err.push(l) }, out, err };
}

describe('workhorse tick', () => {
  it('runs one tick against --database-url and prints its summary', async () => {
    await Promise.all([1, 2].map(() => client.enqueue(SleepJob, { ms: 10 }, { timeoutMs: 1000 })));
    const { io, out, err } = capture();
    const code = await main(['tick', fixtureApp, '--database-url', db.url, '--budget-ms', '5000', '--concurrency', '2'], io);
    expect(err).toEqual([]);
    expect(code).toBe(0);
    expect(JSON.parse(out.at(-1)!)).toMatchObject({ claimed: 2, succeeded: 2, failed: 0, fannedOut: 0 });
  });

  it('refuses a run without a database and names the fix', async () => {
    const saved = process.env.DATABASE_URL;
    delete process.env.DATABASE_URL;
    try {
      const { io, err } = capture();
      expect(await main(['tick', fixtureApp], io)).toBe(2);
      expect(err.join('\n')).toMatch(/DATABASE_URL|--database-url/);
    } finally {
      if (saved !== undefined) process.env.DATABASE_URL = saved;
    }
  });

  it('rejects a bad flag value with a clear error', async () => {
    const { io, err } = capture();
    expect(await main(['tick', fixtureApp, '--database-url', db.url, '--budget-ms', 'soon'], io)).toBe(2);
    expect(err.join('\n')).toMatch(/budget-ms/);
  });
});
