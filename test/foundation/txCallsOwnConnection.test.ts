// A call made in the caller's transaction (`enqueue`, `enqueueMany` or
// `publish` with `tx`) writes on that transaction's connection, and needs no
// other. The client's first call checked the schema version on a connection
// of its pool first: with the pool's every connection held by transactions
// that enqueue or publish (a pool of 1, here), the call waited callTimeoutMs
// and failed with "no database connection". The check now runs on `tx`.
// A real PostgreSQL.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, SchemaVersionError } from '../../src/index.js';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Job = defineJob({ type: 'txconn.job', schema: z.object({ n: z.number() }) });

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

/** A client on a pool of one connection, that connection taken by the caller's open transaction. */
async function heldPool(callTimeoutMs = 2_000) {
  const pool = new pg.Pool({ connectionString: db.url, max: 1 });
  const client = createClient({ pool, jobs: [Job], callTimeoutMs });
  const tx = await pool.connect();
  await tx.query('begin');
  return {
    client,
    tx,
    async end(commit: boolean) {
      await tx.query(commit ? 'commit' : 'rollback');
      tx.release();
      await client.close();
      await pool.end();
    },
  };
}

describe('a first call in tx, with the pool held by that transaction', () => {
  it('enqueue writes in it, and the job exists once it commits', async () => {
    const h = await heldPool();
    const r = await h.client.enqueue(Job, { n: 1 }, { tx: h.tx });
    await h.end(true);
    const { rows } = await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.jobs where id = $1', [r.id]);
    expect(rows[0]!.n).toBe(1);
  });

  it('enqueueMany writes in it', async () => {
    const h = await heldPool();
    const r = await h.client.enqueueMany([{ job: Job, payload: { n: 2 } }, { job: Job, payload: { n: 3 } }], { tx: h.tx });
    await h.end(true);
    expect(r).toHaveLength(2);
  });

  it('publish writes in it, and a rollback leaves no event', async () => {
    const h = await heldPool();
    const { id } = await h.client.publish('txconn.topic', { a: 1 }, { tx: h.tx, key: 'k' });
    await h.end(false);
    const { rows } = await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.outbox_events where id = $1', [id]);
    expect(rows[0]!.n).toBe(0);
  });

  it('a database of another schema version is still refused, on the transaction', async () => {
    const other = await createEmptyDatabase();
    try {
      const pool = new pg.Pool({ connectionString: other.url, max: 1 });
      const client = createClient({ pool, jobs: [Job], callTimeoutMs: 2_000 });
      const tx = await pool.connect();
      await tx.query('begin');
      await expect(client.enqueue(Job, { n: 4 }, { tx })).rejects.toBeInstanceOf(SchemaVersionError);
      await expect(client.publish('txconn.topic', {}, { tx })).rejects.toBeInstanceOf(SchemaVersionError);
      await tx.query('rollback');
      tx.release();
      await client.close();
      await pool.end();
    } finally {
      await other.drop();
    }
  });
});
