// The readiness probe's round trip to the database. It runs as a bounded
// call (guardedDb.ts): a ping the server does not answer in time has its
// connection destroyed, so a hung or vanished server cannot keep the pool
// slot it took, one per probe, until the worker has none left.
import type pg from 'pg';
import { GuardedDb } from './guardedDb.js';

/** One `select 1` within `timeoutMs` (checkout included), or a DatabaseUnavailableError. */
export async function pingDatabase(pool: pg.Pool, timeoutMs: number): Promise<void> {
  await new GuardedDb(pool, { timeoutMs }).query('select 1');
}
