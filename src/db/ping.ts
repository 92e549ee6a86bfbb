// The readiness probe's round trip to the database. It runs as a bounded
// call (guardedDb.ts): a ping the server does not answer in time has its
// connection destroyed, so a hung or vanished server cannot keep the pool
// slot it took, one per probe, until the worker has none left. A server that
// answers but takes no writes (a standby after a failover, or
// default_transaction_read_only) is not ready either: no claim, heartbeat or
// settlement can go through it; nor is one that refuses the login the
// workhorse schema (its grants revoked).
import type pg from 'pg';
import { DatabaseUnavailableError } from '../errors.js';
import { GuardedDb } from './guardedDb.js';

/** The reason a ping gives for a server that answers but takes no writes. */
export const READ_ONLY_REASON = 'the database is read-only (a standby, or default_transaction_read_only is on): no job can be claimed or settled';

/** Whether the session takes no writes: the server is a standby, or the session began read-only. */
export const READ_ONLY_SQL = "pg_is_in_recovery() or current_setting('transaction_read_only') = 'on'";

/**
 * One query within `timeoutMs` (checkout included); a DatabaseUnavailableError when it fails or the server
 * takes no writes. A read-only session is not lent out again: it stays read-only for its life, and the
 * pool's next ping would find it so after the database takes writes again (healthCheck.ts does the same).
 */
export async function pingDatabase(pool: pg.Pool, timeoutMs: number): Promise<void> {
  const readOnly = await new GuardedDb(pool, { timeoutMs }).withBoundedClient(async (q, discard) => {
    // It reads the registry too: a login whose grants on the workhorse schema were revoked is refused here
    // (42501), as every claim and heartbeat of its worker is, though the server answers.
    const { rows } = await q.query<{ read_only: boolean }>(`select ${READ_ONLY_SQL} as read_only, exists (select 1 from workhorse.worker_registry limit 1) as reads`);
    const ro = rows[0]?.read_only === true;
    if (ro) discard(new Error('a read-only session: not reused'));
    return ro;
  });
  if (readOnly) throw new DatabaseUnavailableError(READ_ONLY_REASON);
}
