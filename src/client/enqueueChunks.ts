// enqueueMany in statements of bounded size. enqueue_many_v1 takes its batch
// as one jsonb parameter, so one statement for any number of items would
// build one JSON text as large as the batch: past 256 MB the server refuses
// it ("total size of jsonb array elements exceeds the maximum of 268435455
// bytes", seen with 1,100 payloads of 250 KB), past V8's longest string
// (about 512 MiB) JSON.stringify throws, past 1 GB no value or protocol
// message carries it; each after the client built the whole text. A batch
// over one chunk is sent as several statements in ONE transaction (the
// caller's, or one opened here on a connection of the pool), so either every
// job exists or none does. Dedupe is unchanged: a later statement of the
// same transaction sees the rows of the earlier ones, so a key repeated
// across two chunks returns the first job exactly as within one statement.
import type { Enqueued, Protocol, Queryable } from '../db/protocol.js';
import { inOwnTransaction } from '../db/ownTransaction.js';
import { GuardedDb } from '../db/guardedDb.js';
import { PAYLOAD_BYTES, type SizedJobInsert } from './enqueueInput.js';
import { isPgPool } from '../db/pgShape.js';

/**
 * Most items in one statement. Measured with 200,000 small items (33 MB of
 * JSON) in one transaction on the embedded PostgreSQL, 2 busy cores:
 * 1,000 a chunk 9.6 s and 210 MiB peak RSS of the client process, 5,000
 * 9.0 s / 261 MiB, 20,000 8.4 s / 313 MiB, all in one statement 11.4 s /
 * 403 MiB. Past a few thousand the time hardly changes while the memory of
 * both sides grows with the chunk: 5,000 (HTTP's 1,000-job batch stays one statement).
 */
export const ENQUEUE_CHUNK_ITEMS = 5_000;

/**
 * Most bytes of payload (plus ROW_OVERHEAD_BYTES a row) in one statement:
 * far below PostgreSQL's 1 GB and V8's string limit. A single payload
 * (at most maxPayloadBytes, 64 MiB) larger than this goes alone.
 */
export const ENQUEUE_CHUNK_BYTES = 64 * 1024 * 1024;

/** What a row holds beside its payload at most, roughly: two 512-character keys, options, trace context. */
const ROW_OVERHEAD_BYTES = 4096;

/** Consecutive index ranges [start, end) of rows with these payload sizes, each within both limits; never empty. */
export function chunkBounds(payloadBytes: number[], maxItems = ENQUEUE_CHUNK_ITEMS, maxBytes = ENQUEUE_CHUNK_BYTES): [number, number][] {
  const bounds: [number, number][] = [];
  let start = 0;
  let bytes = 0;
  payloadBytes.forEach((b, i) => {
    const size = b + ROW_OVERHEAD_BYTES;
    if (i > start && (i - start >= maxItems || bytes + size > maxBytes)) {
      bounds.push([start, i]);
      start = i;
      bytes = 0;
    }
    bytes += size;
  });
  if (payloadBytes.length > start) bounds.push([start, payloadBytes.length]);
  return bounds;
}

/**
 * Inserts `rows` on `db` (the client's pool, or the caller's `tx`) with
 * `protocol`; results in input order. More than one chunk runs in one
 * transaction: the caller's when `db` is a connection inside one, else one
 * opened here (on that connection, or on one of the pool `db`: a pool runs
 * each statement on whichever connection is free).
 */
export async function enqueueChunked(protocol: Protocol, db: Queryable, ns: string, rows: SizedJobInsert[]): Promise<Enqueued[]> {
  // Sizes as measured when each payload was checked (buildJobInsert). One
  // statement is atomic by itself: a batch that fits one is sent as it always was.
  const bounds = chunkBounds(rows.map((r) => r[PAYLOAD_BYTES]));
  if (bounds.length <= 1) return protocol.enqueueMany(db, ns, rows);
  const run = async (q: Queryable) => {
    const results: Enqueued[] = [];
    for (const [start, end] of bounds) results.push(...(await protocol.enqueueMany(q, ns, rows.slice(start, end))));
    return results;
  };
  if (db instanceof GuardedDb) {
    // The client's own calls: one connection for the transaction, each statement bounded.
    return db.withBoundedClient((conn, discard) => inOwnTransaction(conn, run, (e) => discard(e instanceof Error ? e : new Error(String(e)))));
  }
  if (!isPgPool(db)) {
    if (await inTransaction(db)) return run(db);
    return inOwnTransaction(db, run);
  }
  const conn = await db.connect();
  let broken: unknown;
  try {
    return await inOwnTransaction(conn, run, (e) => (broken = e));
  } finally {
    // A connection whose rollback failed is not given back to the pool.
    conn.release(broken instanceof Error ? broken : undefined);
  }
}

/**
 * Whether a connection is inside a transaction block: a savepoint can only
 * be set in one (25P01 otherwise). A connection given as `tx` outside
 * `begin` would otherwise commit each chunk on its own.
 */
async function inTransaction(db: Queryable): Promise<boolean> {
  try {
    await db.query('savepoint workhorse_enqueue_chunks');
  } catch (err) {
    if ((err as { code?: unknown }).code === '25P01') return false;
    throw err;
  }
  await db.query('release savepoint workhorse_enqueue_chunks');
  return true;
}
