// sql/protocol/heartbeat.sql: one statement per worker per interval.
import { mapped } from '../sqlState.js';
import type { Queryable } from '../queryable.js';

/** The fence of one lease: (job id, execution). */
export interface LeaseRef {
  id: string;
  execution: number;
}

/** A lease as the heartbeat reports it: whether its handler has started. */
export interface HeldLease extends LeaseRef {
  started?: boolean;
  /** When the claim that took it was sent (Date.now()): its lease in the database runs at least the lease from then. */
  claimedAt?: number;
}

export interface HeartbeatResult {
  /** Leases still this worker's; the worker aborts every other handler. */
  accepted: Set<string>;
  /** false when the registry row is gone: register again. */
  registered: boolean;
  /** The operator pause stored in the registry. */
  paused: boolean;
  recovered: number;
}

export function heartbeatMany(
  db: Queryable,
  ns: string,
  workerId: string,
  leases: HeldLease[],
  active: number,
  leaseMs: number,
  recoverLimit: number,
  releaseUnknownMs: number | null = null,
): Promise<HeartbeatResult> {
  return mapped({}, async () => {
    const r = await db.query<{ accepted: string[]; registered: boolean; paused: boolean; recovered: number }>(
      'select * from workhorse.heartbeat_many_v1($1, $2, $3::bigint[], $4::bigint[], $5, $6, $7, $8::boolean[], $9)',
      [
        ns,
        workerId,
        leases.map((l) => l.id),
        leases.map((l) => l.execution),
        active,
        leaseMs,
        recoverLimit,
        leases.map((l) => l.started ?? false),
        releaseUnknownMs,
      ],
    );
    const row = r.rows[0]!;
    return { accepted: new Set(row.accepted.map(String)), registered: row.registered, paused: row.paused, recovered: row.recovered };
  });
}
