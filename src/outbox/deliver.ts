// One delivery pass of the outbox: lease a batch, deliver it and record the
// outcome, until a lease comes back empty (or the pass is told to stop).
// Events of one key go one after the other in id order and the key stops
// at its first failure (its later events are released untouched, so order
// holds); different keys go in parallel up to `concurrency` per route (the
// set of sinks a key's events go to: a hanging sink takes up its own keys'
// turns, not those of keys bound for other sinks). No delivery
// starts once too little of the lease is left for it to finish: the rest is
// released. A deliverer that dies mid-batch writes nothing, and its events
// are leased again once its lease ends: delivered at least once, never lost.
// The lease and the settlement are each bounded by the lease (a hung server
// cannot hold a pass, and whoever waits for it, forever; an unrecorded
// settlement is delivered again after the lease). So is each delivery: a
// sink that has not answered when too little of the lease is left to record
// the outcome has failed (the event is tried again with backoff and can go
// dead), and one that has not answered when the pass is stopped leaves its
// event released: a sink that never answers and ignores its signal holds
// neither the event's attempts nor the worker's stop. A pass may also have a
// deadline of its own (a tick's claim window): no batch is leased and no
// delivery starts too close to it, and a sink that has not answered by it
// has failed, as at the lease's end; only a stop releases events untouched.
// Each sink gets a signal that aborts when its answer is no longer awaited.
// A database fault costs seconds, not the lease: a lease call that fails on
// one may have committed with its answer lost, so the pass releases
// whatever its owner id holds (outbox_release_v1, retried until the lease
// would have ended anyway) and ends with an OutboxFaultError; a settlement
// that fails on one is written again (it writes only rows its owner still
// leases, so a repeat changes nothing) until too little of the lease is
// left, and if it still cannot be written the owner's leases are released
// once the database answers (its delivered events go out again: at least
// once). Either way the error says, in one line, what became of the events.
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Client } from '../client/client.js';
import { GuardedDb } from '../db/guardedDb.js';
import { retryTransient } from '../db/retryTransient.js';
import { isLockTimeout, isQueryCanceled, isReadOnlySession } from '../db/sqlState.js';
import { describeDbError, isTransientDbError } from '../db/transient.js';
import { DatabaseUnavailableError } from '../errors.js';
import type { LeasedEvent, OutboxSettlement, Queryable } from '../db/protocol.js';
import { errorToJson, type StoredError } from '../errorJson.js';
import type { ResolvedOutboxOptions } from './outboxOptions.js';
import { BatchSettlement } from './batchSettlement.js';
import { sinkTakes, type OutboxEvent } from './sink.js';
import { sinkFailureText } from './sinkFailure.js';
import { retryAfterOf } from './retryAfter.js';

export interface DeliveryResult {
  delivered: number;
  retried: number;
  dead: number;
  batches: number;
  /** Milliseconds until the soonest event that failed in this pass is due again (null: none failed). */
  nextRetryInMs: number | null;
}

/**
 * A delivery pass ended by a database fault, its message saying what became
 * of the outbox events its owner held. A DatabaseUnavailableError: a
 * database fault to wait out, logged in one line.
 */
export class OutboxFaultError extends DatabaseUnavailableError {}

/** A database fault, or a statement PostgreSQL cancelled or timed out on a lock: worth trying again. */
function isOutboxFault(err: unknown): boolean {
  return isTransientDbError(err) || isQueryCanceled(err) || isLockTimeout(err);
}

export interface DeliverOptions {
  signal?: AbortSignal;
  maxBatches?: number;
  owner?: string;
  db?: Queryable;
  deadline?: number;
  /**
   * Told, as soon as a failure is recorded, in how many ms that event is due
   * again: a pump looks again then, while the pass may still wait on a slow
   * sink for another event (nextRetryInMs comes only when the pass ends).
   */
  onRetryDue?: (ms: number) => void;
}

/** Runs batches until one is empty, `maxBatches`, or `signal` aborts. */
export async function deliverOutbox(
  client: Client,
  o: ResolvedOutboxOptions,
  opts: DeliverOptions = {},
): Promise<DeliveryResult> {
  // A call that takes longer than the lease is of no use: the events are leased again by then.
  const db = opts.db ?? new GuardedDb(client.pool, { timeoutMs: o.leaseMs });
  // One signal for the pass, following the caller's: every delivery in flight listens to it, more than
  // Node's default of 10 listeners (concurrency 8, passes side by side), which is no leak.
  const pass = new AbortController();
  setMaxListeners(0, pass.signal);
  const follow = () => pass.abort(opts.signal?.reason);
  if (opts.signal?.aborted) follow();
  else opts.signal?.addEventListener('abort', follow, { once: true });
  try {
    return await runBatches(client, o, opts, db, pass.signal);
  } finally {
    opts.signal?.removeEventListener('abort', follow);
  }
}

async function runBatches(
  client: Client,
  o: ResolvedOutboxOptions,
  opts: DeliverOptions,
  db: Queryable,
  signal: AbortSignal,
): Promise<DeliveryResult> {
  const out: DeliveryResult = { delivered: 0, retried: 0, dead: 0, batches: 0, nextRetryInMs: null };
  const maxBatches = opts.maxBatches ?? 100;
  const deadline = opts.deadline ?? Infinity;
  // No delivery starts after this: it could not have its time before the deadline.
  const deadlineLastStart = deadline - Math.min(DELIVERY_ALLOWANCE_MS, Math.max(0, deadline - Date.now()) / 2);
  while (out.batches < maxBatches && !signal.aborted && Date.now() < deadlineLastStart) {
    const owner = `${opts.owner ?? 'outbox'}:${randomUUID()}`;
    const leasedAt = Date.now();
    const leaseEnd = leasedAt + o.leaseMs;
    let events: LeasedEvent[];
    try {
      events = await client.protocol.leaseOutbox(db, client.namespace, owner, o.batchSize, o.leaseMs);
    } catch (err) {
      if (!isOutboxFault(err)) throw err;
      // Refused by PostgreSQL (read-only, cancelled, a lock timeout): rolled back, nothing leased. Otherwise it may
      // have committed with its answer lost: whatever it leased is released, not left for the lease.
      const released = refusedStatement(err) ? 'nothing was leased (the statement was refused and rolled back)' : await releaseOwner(client, db, owner, leaseEnd, signal);
      throw new OutboxFaultError(`outbox: the lease call failed (${describeDbError(err)}); ${released}`, { cause: err });
    }
    if (events.length === 0) break;
    out.batches++;
    // A settlement failing on a fault is written again while enough of the lease is left to release after it
    // (once the pass is stopped, it is tried once: a stopping worker does not wait out a fault for it).
    const settleUntil = leaseEnd - Math.min(SETTLE_RELEASE_MARGIN_MS, o.leaseMs / 4);
    const batch = new BatchSettlement(async (part) => {
      const r = await retryTransient(
        () =>
          client.protocol.settleOutbox(db, client.namespace, owner, part, {
            maxAttempts: o.maxAttempts,
            baseMs: o.backoff.baseMs,
            maxMs: o.backoff.maxMs,
          }),
        { ...FAULT_RETRY, signal: AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, settleUntil - Date.now()))]), alsoRetry: isOutboxFault },
      );
      out.delivered += r.delivered;
      out.retried += r.retried;
      out.dead += r.dead;
      for (const f of part.failed) {
        const attempts = events.find((e) => e.id === f.id)?.attempts ?? 0;
        if (attempts + 1 >= o.maxAttempts) continue;
        // As outbox_settle_v1 writes it: the backoff, or the sink's Retry-After when longer, at most maxMs.
        const backoff = o.backoff.baseMs * 2 ** Math.min(attempts, 30);
        const delay = Math.min(o.backoff.maxMs, Math.max(backoff, retryAfterOf(f.error) ?? 0));
        out.nextRetryInMs = out.nextRetryInMs === null ? delay : Math.min(out.nextRetryInMs, delay);
        opts.onRetryDue?.(delay);
      }
    });
    const leaseAnswerBy = leasedAt + o.leaseMs - LEASE_MARGIN_MS;
    await deliverBatch(client.namespace, events, o, signal, batch, {
      lastStart: Math.min(deadlineLastStart, leasedAt + o.leaseMs - LEASE_MARGIN_MS - Math.min(DELIVERY_ALLOWANCE_MS, o.leaseMs / 2)),
      answerBy: Math.min(deadline, leaseAnswerBy),
      // What a sink that has not answered by then ran out of, for its error.
      cutBy: deadline < leaseAnswerBy ? "the pass's time ends (a tick's window, or the deadline given)" : 'the outbox lease ends: the outcome must be recorded before it does',
    });
    try {
      await batch.finish();
    } catch (err) {
      if (!isOutboxFault(err)) throw err;
      // Not written: the owner's leases are released as soon as the database answers, not left to expire.
      const released = await releaseOwner(client, db, owner, leaseEnd, signal);
      throw new OutboxFaultError(`outbox: a delivery batch's outcome could not be recorded (${describeDbError(err)}); ${released}`, { cause: err });
    }
    // A key that failed is held back by its failed event; anything else released is leased again.
  }
  return out;
}

/**
 * A statement PostgreSQL answered with a refusal that rolled it back (a
 * read-only session, a cancellation, a lock timeout): it took no effect.
 * A lost connection, by contrast, may have followed a commit.
 */
function refusedStatement(err: unknown): boolean {
  return isReadOnlySession(err) || isQueryCanceled(err) || isLockTimeout(err);
}

/** Backoff of the outbox's retries on a database fault. */
const FAULT_RETRY = { baseMs: 100, maxMs: 2000 };
/** How much of the lease a settlement's retries leave for the release after them, at most. */
const SETTLE_RELEASE_MARGIN_MS = 10_000;

/**
 * Releases what `owner` leases, trying again on a fault until the lease
 * would have ended anyway or the pass stops (after one try). Says what
 * became of the events, for the log.
 */
async function releaseOwner(client: Client, db: Queryable, owner: string, leaseEnd: number, signal: AbortSignal): Promise<string> {
  try {
    const n = await retryTransient(() => client.protocol.releaseOutbox(db, client.namespace, owner), {
      ...FAULT_RETRY,
      signal: AbortSignal.any([signal, AbortSignal.timeout(Math.max(0, leaseEnd - Date.now()))]),
      alsoRetry: isOutboxFault,
    });
    return n === 0 ? `nothing was leased to ${owner}` : `released the ${n} event(s) leased to ${owner}: they can be leased again at once`;
  } catch (err) {
    return `its events stay leased to ${owner} until the lease ends (the release failed too: ${describeDbError(err)})`;
  }
}

/** How long before the lease ends no new delivery starts, beyond the sinks' own time limit. */
const LEASE_MARGIN_MS = 2000;
/** The longest a sink is given (the webhook's default timeout). */
const DELIVERY_ALLOWANCE_MS = 10_000;

/** Delivers a batch, one lane per key; each lane's outcomes go to `batch` when the lane is done. */
/** When a batch's deliveries may start and must be answered by, and what ends that window (for a silent sink's error). */
interface DeliveryWindow {
  lastStart: number;
  answerBy: number;
  cutBy: string;
}

async function deliverBatch(
  namespace: string,
  events: LeasedEvent[],
  o: ResolvedOutboxOptions,
  signal: AbortSignal,
  batch: BatchSettlement,
  window: DeliveryWindow,
): Promise<void> {
  // One lane per key (events without a key each get their own), in id order.
  const lanes = new Map<string, LeasedEvent[]>();
  for (const e of events) {
    const lane = e.key === null ? `#${e.id}` : `k${e.key}`;
    let l = lanes.get(lane);
    if (!l) lanes.set(lane, (l = []));
    l.push(e);
  }
  // The lanes of each route (the sinks a key's events go to) take turns among themselves, up to
  // `concurrency` at once per route: a sink that hangs holds its own keys' turns, not other sinks' keys.
  const routes = new Map<string, LeasedEvent[][]>();
  for (const lane of lanes.values()) {
    const route = routeOf(o, lane);
    let r = routes.get(route);
    if (!r) routes.set(route, (r = []));
    r.push(lane);
  }
  const runLane = async (lane: LeasedEvent[]): Promise<void> => {
    const s: OutboxSettlement = { delivered: [], failed: [], released: [] };
    await deliverLane(namespace, lane, o, signal, s, window);
    batch.add(s);
  };
  const workers = [...routes.values()].flatMap((queue) =>
    Array.from({ length: Math.min(o.concurrency, queue.length) }, async () => {
      for (let lane = queue.shift(); lane; lane = queue.shift()) await runLane(lane);
    }),
  );
  await Promise.all(workers);
}

/** Which of the sinks take any of the lane's events (their places in the list), as one string: the lanes of one route share its turns. */
function routeOf(o: ResolvedOutboxOptions, lane: LeasedEvent[]): string {
  const topics = new Set(lane.map((e) => e.topic));
  return o.sinks.flatMap((k, i) => ([...topics].some((t) => sinkTakes(k, t)) ? [i] : [])).join(',');
}

/** One key's events in id order, into `s`; the key stops at its first failure (the rest released). */
async function deliverLane(
  namespace: string,
  lane: LeasedEvent[],
  o: ResolvedOutboxOptions,
  signal: AbortSignal,
  s: OutboxSettlement,
  { lastStart, answerBy, cutBy }: DeliveryWindow,
): Promise<void> {
  for (let i = 0; i < lane.length; i++) {
    const e = lane[i]!;
    if (signal.aborted || Date.now() > lastStart) {
      for (const rest of lane.slice(i)) s.released.push(rest.id);
      return;
    }
    try {
      await deliverOne(namespace, e, o, signal, answerBy, cutBy);
      s.delivered.push(e.id);
    } catch (err) {
      // Stopped by the deliverer (shutdown, tick deadline): not the sink's failure.
      if (signal.aborted) s.released.push(e.id);
      else s.failed.push({ id: e.id, error: storedFailure(err) });
      for (const rest of lane.slice(i + 1)) s.released.push(rest.id);
      return;
    }
  }
}

async function deliverOne(namespace: string, e: LeasedEvent, o: ResolvedOutboxOptions, signal: AbortSignal, answerBy: number, cutBy: string): Promise<void> {
  const event: OutboxEvent = {
    id: e.id,
    namespace,
    topic: e.topic,
    key: e.key,
    payload: e.payload,
    publishedAt: e.createdAt.toISOString(),
    attempt: e.attempts + 1,
  };
  const sinks = o.sinks.filter((k) => sinkTakes(k, e.topic));
  // A sink that throws before it returns a promise fails like one that rejects; whatever it threw is read guarded.
  const answered = sinks.map(() => false);
  const waitMs = Math.max(0, answerBy - Date.now());
  // Aborts with the pass, or once the answer is no longer awaited (a request still open is cancelled).
  const sinkSignal = AbortSignal.any([signal, AbortSignal.timeout(waitMs)]);
  const deliveries = Promise.allSettled(
    sinks.map(async (k, i) => {
      try {
        return await k.deliver(event, sinkSignal);
      } finally {
        answered[i] = true;
      }
    }),
  );
  const results = await answerWithin(deliveries, signal, waitMs, () => {
    const silent = sinks.filter((_, i) => !answered[i]).map((k) => k.name);
    return new Error(`${silent.join(', ')}: no answer within ${waitMs} ms (${cutBy})`);
  });
  // A sink cut off by the window's end (the SDK's own "Request aborted") is said to be; one that failed on its own says why.
  const cut = sinkSignal.aborted && !signal.aborted ? `no answer within ${waitMs} ms (${cutBy})` : undefined;
  const failures = results.flatMap((r, i) =>
    r.status === 'rejected' ? [`${sinks[i]!.name}: ${cut && isAbort(r.reason) ? cut : sinkFailureText(r.reason)}`] : [],
  );
  if (failures.length === 0) return;
  // The longest Retry-After any failed sink asked for: the event's next try waits at least that long.
  const after = results.flatMap((r) => (r.status === 'rejected' ? [retryAfterOf(r.reason) ?? 0] : []));
  throw Object.assign(new Error(failures.join('; ')), Math.max(...after) > 0 ? { retryAfterMs: Math.max(...after) } : {});
}

/** A failed delivery as its event's last error, with the Retry-After its sinks asked for (read by outbox_settle_v1). */
function storedFailure(err: unknown): StoredError & { retryAfterMs?: number } {
  const ms = retryAfterOf(err);
  return ms === undefined ? errorToJson(err) : { ...errorToJson(err), retryAfterMs: ms };
}

/** An abort's rejection (fetch's AbortError or TimeoutError, the AWS SDK's AbortError), not a sink's own failure. */
function isAbort(reason: unknown): boolean {
  const name = (reason as { name?: unknown } | null)?.name;
  return name === 'AbortError' || name === 'TimeoutError';
}

/** `p`, or a rejection once `signal` aborts (its reason) or `ms` pass (`late()`), whichever comes first. */
function answerWithin<T>(p: Promise<T>, signal: AbortSignal, ms: number, late: () => Error): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => done(() => reject(late())), ms);
    const onAbort = () => done(() => reject(signal.reason));
    const done = (settle: () => void) => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
      settle();
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => done(() => resolve(v)),
      (err: unknown) => done(() => reject(err)),
    );
  });
}
