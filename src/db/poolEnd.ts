// Ending a pool workhorse made, in bounded time. pg-pool's end() waits for
// every connection lent out to come back, and a call stuck on a hung server
// (a claim, a beat in flight when the worker stopped) holds one until its
// own timeout: a minute, or a whole lease. So client.close() after a stop
// against a frozen server took as long, and `workhorse worker` exited
// "drained" after it instead of at its drain deadline. The pool's
// connections are tracked from its own events; past the grace, the
// sockets of those still open are destroyed (their calls fail at once and
// come back broken), and what still does not end is left behind.
import type pg from 'pg';
import { destroySocket } from './guardedDb.js';

/** The connections `pool` has open, kept up to date from its connect and remove events. */
export function trackConnections(pool: pg.Pool): Set<pg.PoolClient> {
  const open = new Set<pg.PoolClient>();
  pool.on('connect', (c) => void open.add(c as pg.PoolClient));
  pool.on('remove', (c) => void open.delete(c as pg.PoolClient));
  return open;
}

const later = (ms: number) => new Promise<false>((resolve) => setTimeout(() => resolve(false), ms).unref());

/** Ends `pool`: gracefully for `graceMs`, then by destroying the sockets of `open`, waiting at most `graceMs` more. */
export async function endPool(pool: pg.Pool, open: Set<pg.PoolClient>, graceMs: number): Promise<void> {
  const ended = pool.end().then(() => true as const);
  if (await Promise.race([ended, later(graceMs)])) return;
  for (const c of open) destroySocket(c);
  await Promise.race([ended, later(graceMs)]);
}

/**
 * Destroys the socket of every client `pool` has, connecting ones included
 * (pg-pool keeps them in `_clients`): a connection attempt to a hung server
 * otherwise keeps the process alive until its own connect timeout, after
 * whoever made the pool has given up on it.
 */
export function destroyPoolSockets(pool: pg.Pool): void {
  const clients = (pool as unknown as { _clients?: unknown })._clients;
  if (!Array.isArray(clients)) return;
  for (const c of clients as pg.ClientBase[]) destroySocket(c);
}
