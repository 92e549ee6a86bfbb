// enqueueMany of a large batch (src/client/enqueueChunks.ts): it goes to the
// database in statements of at most ENQUEUE_CHUNK_ITEMS items and
// ENQUEUE_CHUNK_BYTES of payload, in one transaction (the client's own, or
// the caller's tx), so it is all or nothing, results come back in input
// order, and a dedupe key repeated across two chunks returns the first job
// as it does within one statement. A batch whose jsonb would pass
// PostgreSQL's 256 MB limit for one jsonb value is written, not refused.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ENQUEUE_CHUNK_BYTES, ENQUEUE_CHUNK_ITEMS } from '../../src/client/enqueueChunks.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { countJobs } from './support/rows.js';

const Item = defineJob({ type: 'fx.item', schema: z.object({ n: z.number().int(), poison: z.boolean().optional(), s: z.string().optional() }) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Item], poolMax: 4 });
  // A row the database refuses whatever the client checked: a failure in the last chunk.
  await db.pool.query("alter table workhorse.jobs add constraint fx_no_poison check (payload->>'poison' is null)");
});

beforeEach(async () => {
  await db.pool.query('truncate workhorse.jobs, workhorse.job_attempts');
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const N = 2 * ENQUEUE_CHUNK_ITEMS + 1_000;
const items = (n: number, extra: (i: number) => object = () => ({})) =>
  Array.from({ length: n }, (_, i) => ({ job: Item, payload: { n: i, ...extra(i) } }));

/** The size of every statement enqueueMany sends (items per call of the protocol). */
function statementSizes(): number[] {
  const sizes: number[] = [];
  const real = client.protocol.enqueueMany;
  vi.spyOn(client.protocol, 'enqueueMany').mockImplementation((q, ns, rows) => {
    sizes.push(rows.length);
    return real(q, ns, rows);
  });
  return sizes;
}

async function payloadNs(ids: string[]): Promise<Map<string, number>> {
  const r = await db.pool.query<{ id: string; n: number }>("select id::text, (payload->>'n')::int as n from workhorse.jobs where id = any($1::bigint[])", [ids]);
  return new Map(r.rows.map((x) => [x.id, x.n]));
}

describe('enqueueMany of more than one chunk', () => {
  it('sends statements of at most ENQUEUE_CHUNK_ITEMS items and returns every job in input order', async () => {
    const sizes = statementSizes();
    const results = await client.enqueueMany(items(N));
    expect(sizes).toEqual([ENQUEUE_CHUNK_ITEMS, ENQUEUE_CHUNK_ITEMS, 1_000]);
    expect(results).toHaveLength(N);
    expect(results.every((r) => r.created)).toBe(true);
    expect(await countJobs(db.pool)).toBe(N);
    const ns = await payloadNs(results.map((r) => r.id));
    expect(results.map((r) => ns.get(r.id))).toEqual(results.map((_, i) => i));
  });

  it('writes nothing when a statement after the first fails (its own transaction rolls back)', async () => {
    const sizes = statementSizes();
    await expect(client.enqueueMany(items(N, (i) => (i === N - 1 ? { poison: true } : {})))).rejects.toThrow(/fx_no_poison/);
    expect(sizes).toHaveLength(3);
    expect(await countJobs(db.pool)).toBe(0);
    // The connection went back to the pool usable.
    expect((await client.enqueue(Item, { n: 1 })).created).toBe(true);
  });

  it("runs every statement in the caller's tx: nothing exists until it commits, nothing after a rollback", async () => {
    const conn = await client.pool.connect();
    try {
      await conn.query('begin');
      const results = await client.enqueueMany(items(N), { tx: conn });
      expect(results).toHaveLength(N);
      expect(await countJobs(db.pool)).toBe(0);
      await conn.query('rollback');
      expect(await countJobs(db.pool)).toBe(0);
      await conn.query('begin');
      await client.enqueueMany(items(N), { tx: conn });
      await conn.query('commit');
      expect(await countJobs(db.pool)).toBe(N);
    } finally {
      conn.release();
    }
  });

  it('opens its own transaction on a connection given as tx outside begin: all or nothing still', async () => {
    const conn = await client.pool.connect();
    try {
      await expect(client.enqueueMany(items(N, (i) => (i === N - 1 ? { poison: true } : {})), { tx: conn })).rejects.toThrow(/fx_no_poison/);
      expect(await countJobs(db.pool)).toBe(0);
      const results = await client.enqueueMany(items(N), { tx: conn });
      expect(results).toHaveLength(N);
      expect(await countJobs(db.pool)).toBe(N);
      // The connection is left outside a transaction, as it was given.
      expect((await conn.query<{ t: boolean }>('select now() = statement_timestamp() as t')).rows[0]!.t).toBe(true);
    } finally {
      conn.release();
    }
  });

  it('opens its own transaction when tx is a pool (a pool would spread the statements over connections)', async () => {
    const sizes = statementSizes();
    await expect(client.enqueueMany(items(N, (i) => (i === N - 1 ? { poison: true } : {})), { tx: client.pool })).rejects.toThrow(/fx_no_poison/);
    expect(sizes).toHaveLength(3);
    expect(await countJobs(db.pool)).toBe(0);
  });

  it('treats a dedupe key repeated across chunks as within one statement: the later item gets the first job', async () => {
    const keyed = (n: number, at: number[]) =>
      Array.from({ length: n }, (_, i) => ({ job: Item, payload: { n: i }, options: at.includes(i) ? { dedupeKey: 'order:7' } : {} }));
    // One statement (a small batch) and three chunks (the key in the first and the third) answer alike.
    const small = await client.enqueueMany(keyed(3, [0, 2]));
    expect(small[2]).toEqual({ id: small[0]!.id, created: false });
    await db.pool.query('truncate workhorse.jobs');
    const sizes = statementSizes();
    const results = await client.enqueueMany(keyed(N, [1, N - 1]));
    expect(sizes).toHaveLength(3);
    expect(results[1]!.created).toBe(true);
    expect(results[N - 1]).toEqual({ id: results[1]!.id, created: false });
    expect(await countJobs(db.pool)).toBe(N - 1);
    // A key that already existed before the call: every repeat returns it.
    const again = await client.enqueueMany(keyed(N, [0, ENQUEUE_CHUNK_ITEMS + 5]));
    expect(again[0]).toEqual({ id: results[1]!.id, created: false });
    expect(again[ENQUEUE_CHUNK_ITEMS + 5]).toEqual({ id: results[1]!.id, created: false });
  });

  it('keeps one small batch one statement, as before', async () => {
    const sizes = statementSizes();
    await client.enqueueMany(items(1_000));
    expect(sizes).toEqual([1_000]);
  });
});

describe('enqueueMany of more payload than one jsonb value holds', () => {
  it(
    'splits by payload bytes: 1,100 payloads of 250 KB (275 MB, past the 256 MB of one jsonb) are all written',
    { timeout: 180_000 },
    async () => {
      const s = 'x'.repeat(250_000);
      const sizes = statementSizes();
      const results = await client.enqueueMany(items(1_100, () => ({ s })));
      expect(results).toHaveLength(1_100);
      expect(sizes.length).toBeGreaterThan(1);
      expect(Math.max(...sizes) * 250_000).toBeLessThanOrEqual(ENQUEUE_CHUNK_BYTES);
      expect(await countJobs(db.pool)).toBe(1_100);
      const r = await db.pool.query<{ n: number }>("select count(*)::int as n from workhorse.jobs where length(payload->>'s') = 250000");
      expect(r.rows[0]!.n).toBe(1_100);
    },
  );
});
