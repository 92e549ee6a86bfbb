// The namespace table's first page when a job holds the last id a bigint
// can (9223372036854775807, after a sequence was set near its end): the
// window's top was max(id) + 1, which overflowed, so every namespace's
// dashboard answered "bigint out of range" on its first page. A real
// PostgreSQL.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import * as dash from '../../src/db/dashboard.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import testApp from '../http/fixtures/app.js';

const LAST = '9223372036854775807';
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: testApp.jobs, poolMax: 2 });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it('pages from the last id a bigint holds, every filter, and its cursor continues below it', async () => {
  const first = (await client.enqueue('report.build', { account: 'a', rows: 1 })).id;
  await db.pool.query("select setval('workhorse.jobs_id_seq', 9223372036854775806)");
  const last = (await client.enqueue('report.build', { account: 'b', rows: 2 })).id;
  expect(last).toBe(LAST);
  for (const f of [{}, { status: 'ready' as const }, { status: 'succeeded' as const }, { type: 'report.build' }]) {
    const p = await dash.dashboardJobs(db.pool, 'default', { limit: 1, span: 10_000, ...f });
    if (f.status === 'succeeded') {
      expect(p.jobs).toEqual([]);
      continue;
    }
    expect(p.jobs.map((j) => j.id)).toEqual([LAST]);
    const next = await dash.dashboardJobs(db.pool, 'default', { limit: 1, span: 10_000, ...f, beforeId: p.nextBeforeId ?? LAST });
    expect(next.jobs.map((j) => j.id)).toEqual([first]);
  }
});
