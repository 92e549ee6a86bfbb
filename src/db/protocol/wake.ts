// sql/protocol/wake.sql: when the next delayed job of a worker's queues
// comes due (the wake channels and hints themselves are sent by the SQL).
import { mapped } from '../sqlState.js';
import type { Queryable } from '../queryable.js';

/**
 * Milliseconds (database clock, rounded up) until the earliest not-yet-due
 * ready job of `types` in `queues` comes due, looking at most `withinMs`
 * ahead; null when none is.
 */
export function nextDue(db: Queryable, ns: string, queues: string[], types: string[], withinMs: number): Promise<number | null> {
  return mapped({}, async () => {
    const r = await db.query<{ ms: number | null }>('select workhorse.next_due_v1($1, $2, $3, $4) as ms', [ns, queues, types, Math.floor(withinMs)]);
    return r.rows[0]!.ms;
  });
}
