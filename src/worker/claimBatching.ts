// When a worker claims, and how much: the batching rule of the claim loop.
// A claim costs one statement whatever its size, and the database's cost
// per job falls with the batch (measured on 2 cores: 31 us per job at 250,
// 25 us at 500), so a busy worker waits for a batch's worth of free room
// rather than claiming one job per finished handler.
import type { WakeReason } from './waiter.js';

export interface Capacity {
  concurrency: number;
  prefetch: number;
}

/**
 * Room left for claiming: running handlers and the local buffer count; jobs
 * whose handler finished and whose settlement is in flight do not (their
 * leases are still heartbeated), so claims overlap settlements. While the
 * settlement writes are failing (`settling` is given then: a
 * statement_timeout cancelling them, an outage of writes), those count
 * past settlingCap: the worker stops claiming at about three times its
 * capacity held, instead of running ever more jobs whose outcomes it cannot
 * write (a probe under a 3 ms statement_timeout held 1,508 leases at
 * concurrency 20). The executor wakes the claim loop when they fall back
 * under the cap.
 */
export function freeRoom(c: Capacity, running: number, buffered: number, settling = 0): number {
  return c.concurrency + c.prefetch - running - buffered - Math.max(0, settling - settlingCap(c));
}

/** Settlements in flight that do not hold claims back: two capacities' worth (a batch being written and the next one filling). */
export function settlingCap(c: Capacity): number {
  return 2 * (c.concurrency + c.prefetch);
}

/**
 * The free room a claim waits for. A freed slot alone (or a claim that
 * filled every free slot) waits until half the capacity, and at least the
 * prefetch, is free: with a buffer of 500 the claims are ~480 jobs, not
 * ~250. A hint, the safety poll, or an idle worker claims whatever is free.
 */
export function claimThreshold(c: Capacity, reason: WakeReason, idle: boolean): number {
  if (reason !== 'slot' || idle) return 1;
  return Math.max(1, Math.floor((c.concurrency + c.prefetch) / 2), c.prefetch);
}

/** The queues in the order a claim tries them: rotated by one each claim, so no queue starves behind another. */
export function rotatedQueues(queues: string[], turn: number): string[] {
  if (queues.length === 1) return queues;
  const start = turn % queues.length;
  return [...queues.slice(start), ...queues.slice(0, start)];
}
