// Connections from before a read-only refusal. A session that began while
// the database was read-only (a standby before a failover completed, a
// database with default_transaction_read_only on) stays read-only for its
// life. The one that refuses a write is destroyed (guardedDb.ts), but its
// pool may hold more of its age, kept alive by reads that succeed: after the
// database took writes again, each of them failed one write (up to the
// pool's size). So a refusal marks the pool, and every connection first lent
// out before it is replaced at its next checkout.

/** Each connection's lend number when it was first lent out. */
const firstLent = new WeakMap<object, number>();
/** Each pool's lend number at its last read-only refusal. */
const refusedAt = new WeakMap<object, number>();
let lends = 0;

/** Records a checkout: whether the connection was lent out before (`reused`), and whether it dates from before its pool's last read-only refusal (`stale`). */
export function checkedOut(pool: object, connection: object): { reused: boolean; stale: boolean } {
  let first = firstLent.get(connection);
  const reused = first !== undefined;
  if (first === undefined) {
    first = ++lends;
    firstLent.set(connection, first);
  }
  const refused = refusedAt.get(pool);
  return { reused, stale: refused !== undefined && first <= refused };
}

/** A connection of `pool` refused a write as read-only: every connection lent out so far is replaced at its next checkout. */
export function readOnlyRefused(pool: object): void {
  refusedAt.set(pool, lends);
}
