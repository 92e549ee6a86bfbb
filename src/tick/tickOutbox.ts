// A tick that fires the `sys` slots with outbox sinks configured delivers
// the due outbox events before it returns, so on ticks delivery is not left
// to the sys.outbox cadence: an event published before (or during) a tick,
// the tick's own lifecycle events included, leaves with that tick. A tick
// has no listener, so this is its "right after commit". The pass leases its
// events like every deliverer (two ticks never send one batch twice) and
// has the tick's claim window as its deadline: no batch or delivery starts
// too close to it, and a sink that has not answered when it closes has
// failed (an attempt counted, backoff, dead after maxAttempts: a sink that
// never answers does not hold its key, and every tick's time, for ever).
// A failure of the pass is logged and left to the next tick or the cadence.
// Its calls go through the tick's bounded db, so they end by the tick's
// deadline.
import type { Client } from '../client/client.js';
import type { Queryable } from '../db/queryable.js';
import { deliverOutbox } from '../outbox/deliver.js';
import type { ResolvedOutboxOptions } from '../outbox/outboxOptions.js';

/** Batches one tick delivers at most; the cadence and later ticks take the rest. */
const TICK_OUTBOX_BATCHES = 10;
/** Less time than this before the window closes: leave delivery to the next tick. */
const MIN_WINDOW_MS = 1000;

export async function deliverBeforeReturn(
  client: Client,
  db: Queryable,
  outbox: ResolvedOutboxOptions,
  owner: string,
  closeAt: number,
  log: (line: string, err?: unknown) => void,
  stop?: AbortSignal,
): Promise<number> {
  const windowMs = closeAt - Date.now();
  if (windowMs < MIN_WINDOW_MS) return 0;
  try {
    // A stop (the tick told to stop) releases what is in flight untouched, as a worker's stop does.
    const r = await deliverOutbox(client, outbox, { deadline: closeAt, maxBatches: TICK_OUTBOX_BATCHES, owner, db, ...(stop ? { signal: stop } : {}) });
    return r.delivered;
  } catch (err) {
    log('[workhorse] tick could not deliver the outbox (the next tick or sys.outbox will):', err);
    return 0;
  }
}
