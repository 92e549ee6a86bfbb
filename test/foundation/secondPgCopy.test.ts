// An app with a copy of `pg` of its own (an older version pinned in the
// app, a linked checkout of workhorse) passes workhorse a pool that is not
// an instance of workhorse's pg.Pool. It was refused as "pool must be a
// pg.Pool"; it is taken by its shape. The second copy here is real: pg and
// its dependencies copied into a directory of their own and loaded from
// there, so Node gives it classes of its own.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import realPg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const PACKAGES = ['pg', 'pg-cloudflare', 'pg-connection-string', 'pg-int8', 'pg-pool', 'pg-protocol', 'pg-types', 'pgpass', 'postgres-array', 'postgres-bytea', 'postgres-date', 'postgres-interval', 'split2', 'xtend'];
const Job = defineJob({ type: 'copy.job', schema: z.object({}) });
let dir: string;
let OtherPg: typeof pg;
let db: TestDatabase;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'pg-copy-'));
  for (const p of PACKAGES) cpSync(join(process.cwd(), 'node_modules', p), join(dir, 'node_modules', p), { recursive: true });
  OtherPg = createRequire(join(dir, 'app.js'))('pg') as typeof pg;
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

it('the copy is another pg: its Pool is not an instance of workhorse’s', () => {
  const pool = new OtherPg.Pool({ connectionString: db.url });
  expect(pool instanceof realPg.Pool).toBe(false);
  return pool.end();
});

it('createClient({ pool }) and runTick({ pool }) take a pool of the other copy, and run a job through it', async () => {
  const pool = new OtherPg.Pool({ connectionString: db.url, max: 4 });
  const client = createClient({ pool, jobs: [Job] });
  try {
    const { id } = await client.enqueue(Job, {});
    // The caller's transaction on the other copy's client, too.
    const conn = await pool.connect();
    try {
      await conn.query('begin');
      await client.enqueue(Job, {}, { tx: conn });
      await conn.query('commit');
    } finally {
      conn.release();
    }
    const app = defineApp({ jobs: [Job], configure: (w) => void w.handle(Job, () => 'ran') });
    const summary = await runTick({ app, pool, deadline: new Date(Date.now() + 5000), scheduleNamespaces: [] });
    expect(summary.succeeded).toBe(2);
    expect((await client.getJob(id))?.status).toBe('succeeded');
  } finally {
    await client.close();
    await pool.end();
  }
});

it('still refuses something that is not a pool', () => {
  expect(() => createClient({ pool: { query: () => undefined } as never })).toThrow(/pool must be a pg.Pool/);
});
