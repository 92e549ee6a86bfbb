// Whether a value is node-postgres's pool or client, by shape as well as by
// class. `pg` is a dependency of workhorse, not a peer, so an app easily has
// a copy of its own (an older `pg` pinned in the app, a linked checkout):
// that copy's Pool is not an instance of workhorse's, and `instanceof`
// refused a real pool as "pool must be a pg.Pool". The shape is pg-pool's
// public surface, which every 8.x release has.
import pg from 'pg';

function has(v: object, fns: readonly string[]): boolean {
  return fns.every((f) => typeof (v as Record<string, unknown>)[f] === 'function');
}

/** A pg.Pool, of this copy of pg or another. */
export function isPgPool(v: unknown): v is pg.Pool {
  if (v instanceof pg.Pool) return true;
  if (typeof v !== 'object' || v === null) return false;
  const counts = v as { totalCount?: unknown; idleCount?: unknown; waitingCount?: unknown };
  return has(v, ['connect', 'query', 'end', 'on']) && typeof counts.totalCount === 'number' && typeof counts.idleCount === 'number' && typeof counts.waitingCount === 'number';
}

/** A pg.Client (a pool's client included), of this copy of pg or another. */
export function isPgClient(v: unknown): v is pg.Client {
  if (v instanceof pg.Client) return true;
  if (typeof v !== 'object' || v === null) return false;
  return has(v, ['connect', 'query', 'end', 'on']) && typeof (v as { connectionParameters?: unknown }).connectionParameters === 'object';
}
