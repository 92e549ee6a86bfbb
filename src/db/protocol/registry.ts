// sql/protocol/registry.sql: register, refresh and deregister a worker.
import { mapped } from '../sqlState.js';
import type { Queryable } from '../queryable.js';
import type { LeaseRef } from './heartbeat.js';
import { inLeaseOrder } from './leaseOrder.js';

export interface WorkerRegistration {
  workerId: string;
  build: string;
  kind: 'process' | 'tick';
  queues: string[];
  types: string[];
  concurrency: number;
  heartbeatMs: number;
  deadline?: Date | null;
}

/** Returns the database clock. */
export function registerWorker(db: Queryable, ns: string, w: WorkerRegistration): Promise<Date> {
  return mapped({}, async () => {
    const r = await db.query<{ t: Date }>('select workhorse.register_worker_v1($1, $2, $3, $4, $5, $6, $7, $8, $9) as t', [
      ns,
      w.workerId,
      w.build,
      w.kind,
      w.queues,
      w.types,
      w.concurrency,
      w.heartbeatMs,
      w.deadline ?? null,
    ]);
    return r.rows[0]!.t;
  });
}

/**
 * `unstarted`: claimed jobs whose handler never started (released with no
 * attempt). `held`: the leases this process abandons (handlers still
 * running, settlements that gave up), expired at once for recovery; no other
 * lease under the worker id is touched. Returns how many were released.
 */
export function deregisterWorker(db: Queryable, ns: string, workerId: string, unstarted: string[], abandoned: LeaseRef[] = []): Promise<number> {
  const held = inLeaseOrder(abandoned);
  return mapped({}, async () => {
    const r = await db.query<{ n: number }>('select workhorse.deregister_worker_v2($1, $2, $3::bigint[], $4::bigint[], $5::bigint[]) as n', [
      ns,
      workerId,
      unstarted,
      held.map((l) => l.id),
      held.map((l) => l.execution),
    ]);
    return r.rows[0]!.n;
  });
}

/** A stopping worker's drain begins: its registry row says draining, and claimed jobs whose handler never started go back (no attempt counted). */
export function beginDrain(db: Queryable, ns: string, workerId: string, unstarted: LeaseRef[]): Promise<number> {
  return mapped({}, async () => {
    const r = await db.query<{ n: number }>('select workhorse.begin_drain_v1($1, $2, $3::bigint[], $4::bigint[]) as n', [
      ns,
      workerId,
      unstarted.map((l) => l.id),
      unstarted.map((l) => l.execution),
    ]);
    return r.rows[0]!.n;
  });
}

/** Claimed jobs whose handler never started go back to ready (no attempt counted; ledger outcome released); only these leases, at these executions. */
export function releaseUnstarted(db: Queryable, ns: string, workerId: string, unstarted: LeaseRef[]): Promise<number> {
  return mapped({}, async () => {
    const r = await db.query<{ n: number }>('select workhorse.release_unstarted_v1($1, $2, $3::bigint[], $4::bigint[]) as n', [
      ns,
      workerId,
      unstarted.map((l) => l.id),
      unstarted.map((l) => l.execution),
    ]);
    return r.rows[0]!.n;
  });
}

export interface RegistryRefresh {
  /** false when the registry row is gone: register again. */
  registered: boolean;
  /** The operator pause stored in the registry. */
  paused: boolean;
  /** Other live workers sharing any of this worker's queues. */
  peers: number;
}

/** Refreshes the registry row (last seen, active handlers) and reads the operator pause. */
export function refreshWorker(db: Queryable, ns: string, workerId: string, active: number): Promise<RegistryRefresh> {
  return mapped({}, async () => {
    const r = await db.query<RegistryRefresh>('select * from workhorse.refresh_worker_v1($1, $2, $3)', [ns, workerId, active]);
    return r.rows[0]!;
  });
}
