// sql/protocol/steps.sql: the writes a running handler makes under the
// fence. A refused write (WH409) is a StaleLeaseError naming what it was.
import { jsonParam, type Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';
import type { LeaseRef } from './heartbeat.js';

export function setProgress(db: Queryable, ns: string, lease: LeaseRef, progress: unknown): Promise<void> {
  return mapped({ lease, what: 'progress' }, async () => {
    await db.query('select workhorse.set_progress_v1($1, $2, $3, $4::jsonb)', [ns, lease.id, lease.execution, jsonParam(progress)]);
  });
}

/** Returns the recorded result: an earlier record wins over this one. */
export function recordStep(db: Queryable, ns: string, lease: LeaseRef, name: string, result: unknown): Promise<unknown> {
  return mapped({ lease, what: `step "${name}"` }, async () => {
    const r = await db.query<{ result: unknown }>('select workhorse.record_step_v1($1, $2, $3, $4, $5::jsonb) as result', [
      ns,
      lease.id,
      lease.execution,
      name,
      jsonParam(result),
    ]);
    return r.rows[0]!.result;
  });
}

/**
 * Inside a transactional step's open transaction (of id `txid`): records
 * the step, and whether this call's insert wrote the record (`won`; it
 * still does when the body left a savepoint open). A record an earlier
 * transaction committed meanwhile wins; the caller must then roll its own
 * writes back. Undefined, recording nothing, when the statement no longer
 * runs in that transaction (the step's body committed or rolled it back
 * itself).
 */
export function recordTxStep(
  tx: Queryable,
  ns: string,
  lease: LeaseRef,
  name: string,
  result: unknown,
  txid: string,
): Promise<{ result: unknown; won: boolean } | undefined> {
  return mapped({ lease, what: `transactional step "${name}"` }, async () => {
    const r = await tx.query<{ recorded: unknown; won: boolean }>(
      'select recorded, won from workhorse.record_tx_step_v1($1, $2, $3, $4, $5::jsonb, $6::bigint)',
      [ns, lease.id, lease.execution, name, jsonParam(result), txid],
    );
    if (r.rows.length === 0) return undefined;
    return { result: r.rows[0]!.recorded, won: r.rows[0]!.won === true };
  });
}

/**
 * Inside an open transaction: holds the fence and reads the step's record.
 * Outside one (autocommit) it is a fenced read: refused when stale.
 */
export function beginTxStep(
  db: Queryable,
  ns: string,
  lease: LeaseRef,
  name: string,
  what = `transactional step "${name}"`,
): Promise<{ recorded: boolean; result: unknown }> {
  return mapped({ lease, what }, async () => {
    const r = await db.query<{ recorded: boolean; result: unknown }>('select * from workhorse.begin_tx_step_v1($1, $2, $3, $4)', [
      ns,
      lease.id,
      lease.execution,
      name,
    ]);
    return r.rows[0]!;
  });
}
