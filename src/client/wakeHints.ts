// Optional wake hints beside PostgreSQL's NOTIFY (the Redis wake-up,
// src/worker/redisWakeHints.ts, is the one shipped). A client that has them
// publishes one hint per queue after each enqueue it commits itself; a
// worker whose client has them subscribes to its queues. Hints carry no
// truth: a lost or late one costs at most the worker's safety poll, and a
// publisher must never throw or block the enqueue.
import type { JobInsert } from '../db/protocol.js';

/** A queue got work that comes due in `dueInMs` (0: now). */
export interface WakeHint {
  queue: string;
  dueInMs: number;
}

export interface WakeSubscription {
  /** Whether the subscription is connected right now. */
  readonly active: boolean;
  close(): Promise<void>;
}

export interface WakeHints {
  /** Fire and forget: never throws, never waits. */
  publish(namespace: string, hints: WakeHint[]): void;
  /** Calls `onHint` for each hint on one of `queues`; `onReconnect` when it listens again after a gap (hints may have been missed). */
  subscribe(namespace: string, queues: string[], onHint: (hint: WakeHint) => void, onReconnect: () => void): WakeSubscription;
  close(): Promise<void>;
}

/** One hint per queue of the created jobs: the soonest of its new jobs, by this machine's clock. */
export function hintsFor(rows: JobInsert[], created: boolean[], now = Date.now()): WakeHint[] {
  const soonest = new Map<string, number>();
  rows.forEach((row, i) => {
    if (!created[i]) return;
    const queue = row.queue;
    const due = row.run_at ? Math.max(0, Date.parse(row.run_at) - now) : (row.delay_ms ?? 0);
    soonest.set(queue, Math.min(due, soonest.get(queue) ?? Infinity));
  });
  return [...soonest].map(([queue, dueInMs]) => ({ queue, dueInMs }));
}
