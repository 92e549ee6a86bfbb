// Each test file gets its own freshly migrated database on the shared
// server, so files run in parallel without seeing each other's rows.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';
import { migrate } from '../../src/db/migrate.js';

export interface TestDatabase {
  url: string;
  name: string;
  /** An admin pool on the test database, for assertions made straight in SQL. */
  pool: pg.Pool;
  drop(): Promise<void>;
}

export function serverUrl(): string {
  return inject('databaseUrl');
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function createEmptyDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const base = serverUrl();
  const name = `wh_test_${randomBytes(5).toString('hex')}`;
  const admin = new pg.Client({ connectionString: base });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const url = withDatabase(base, name);
  return {
    url,
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: base });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`);
      await c.end();
    },
  };
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const empty = await createEmptyDatabase();
  await migrate({ connectionString: empty.url });
  const pool = new pg.Pool({ connectionString: empty.url, max: 4 });
  pool.on('error', () => undefined);
  return {
    ...empty,
    pool,
    drop: async () => {
      await pool.end();
      await empty.drop();
    },
  };
}

/** Registers a worker id the way a worker does before it claims (claim_many_v1 refuses an unregistered one). */
export async function registerWorkerRow(db: Pick<pg.Pool, 'query'>, namespace: string, workerId: string, types: string[] = []): Promise<void> {
  await db.query('select workhorse.register_worker_v1($1, $2, $3, $4, $5, $6, $7, $8)', [
    namespace,
    workerId,
    'test',
    'process',
    [],
    types,
    1,
    1000,
  ]);
}
