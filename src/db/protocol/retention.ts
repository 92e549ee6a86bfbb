// sql/protocol/retention.sql: one bounded retention batch.
import type { Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';

export function retentionBatch(db: Queryable, ns: string, olderThanMs: number, limit: number): Promise<{ jobs: number; workers: number }> {
  return mapped({}, async () => {
    const r = await db.query<{ jobs: number; workers: number }>('select * from workhorse.retention_v1($1, $2, $3)', [ns, olderThanMs, limit]);
    return r.rows[0]!;
  });
}
