// sql/protocol/recovery.sql: one bounded recovery pass (it also rides every heartbeat).
import { mapped } from '../sqlState.js';
import type { Queryable } from '../queryable.js';

/** Returns how many expired leases it returned to their jobs. */
export function recoverExpired(db: Queryable, ns: string, limit: number): Promise<number> {
  return mapped({}, async () => {
    const r = await db.query<{ n: number }>('select workhorse.recover_expired_v1($1, $2) as n', [ns, limit]);
    return r.rows[0]!.n;
  });
}
