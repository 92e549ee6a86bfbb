// listJobs pages by handing each page's nextCursor back as cursor. The page
// types it as `string | null` (null on the last page), so the filter must take
// null too: the plain paging loop below must compile and visit every job once.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Task = defineJob({ type: 'page.task', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, namespace: 'paging', jobs: [Task] });
  await client.enqueueMany([1, 2, 3, 4, 5].map((n) => ({ job: Task, payload: { n } })));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it('pages through every job by passing nextCursor back as cursor, null included', async () => {
  const seen: number[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const page = await client.admin.listJobs({ limit: 2, cursor });
    seen.push(...page.jobs.map((j) => (j.payload as { n: number }).n));
    cursor = page.nextCursor;
    pages++;
  } while (cursor !== null && pages < 10);
  expect(seen).toEqual([5, 4, 3, 2, 1]);
  expect(pages).toBe(3);
});

it('answers a null nextCursor on a full last page, so no empty page follows', async () => {
  const all = await client.admin.listJobs({ limit: 5 });
  expect(all.jobs).toHaveLength(5);
  expect(all.nextCursor).toBeNull();
  const first = await client.admin.listJobs({ limit: 4 });
  expect(first.jobs).toHaveLength(4);
  const last = await client.admin.listJobs({ limit: 1, cursor: first.nextCursor });
  expect(last.jobs.map((j) => (j.payload as { n: number }).n)).toEqual([1]);
  expect(last.nextCursor).toBeNull();
});
