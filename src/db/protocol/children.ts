// sql/protocol/children.sql: spawning child jobs once per name, inside the
// caller's transaction and under the fence.
import type { Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';
import type { LeaseRef } from './heartbeat.js';

/** Holds the fence until commit; the id of the child spawned under `name` before, or null. */
export function beginSpawn(db: Queryable, ns: string, lease: LeaseRef, name: string): Promise<string | null> {
  return mapped({ lease, what: `spawn "${name}"` }, async () => {
    const r = await db.query<{ child: string | null }>('select workhorse.begin_spawn_v1($1, $2, $3, $4) as child', [
      ns,
      lease.id,
      lease.execution,
      name,
    ]);
    const c = r.rows[0]!.child;
    return c === null ? null : String(c);
  });
}

export function linkChild(db: Queryable, ns: string, lease: LeaseRef, name: string, childId: string, detached: boolean): Promise<void> {
  return mapped({ lease, what: `spawn "${name}"` }, async () => {
    await db.query('select workhorse.link_child_v1($1, $2, $3, $4, $5, $6)', [ns, lease.id, lease.execution, name, childId, detached]);
  });
}
