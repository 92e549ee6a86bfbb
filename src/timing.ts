// Worker timing, derived in one place. The fleet defaults hang off one knob,
// the heartbeat interval (45 s): a lease lasts four heartbeats (180 s) and a
// worker silent for seven heartbeats (315 s) is dead. One worker may instead
// say how long its claims last (`leaseMs`): its heartbeat is then a third of
// that. Every lease row stores its own expiry and every registry row its own
// heartbeat interval, so replicas with different settings stay safe.
export const DEFAULT_HEARTBEAT_MS = 45_000;
/** A lease lasts four heartbeats unless `leaseMs` says otherwise. */
export const LEASE_HEARTBEATS = 4;
/** With only `leaseMs`, the heartbeat is a third of it, at most MAX_HEARTBEAT_MS. */
export const HEARTBEATS_PER_GIVEN_LEASE = 3;
/** The longest heartbeat interval a worker takes (given or derived from `leaseMs`). */
export const MAX_HEARTBEAT_MS = 3_600_000;
/** A worker silent for seven heartbeats is dead. */
export const DEAD_HEARTBEATS = 7;

export function leaseMsFor(heartbeatMs: number): number {
  return heartbeatMs * LEASE_HEARTBEATS;
}

export function deadAfterMsFor(heartbeatMs: number): number {
  return heartbeatMs * DEAD_HEARTBEATS;
}

export interface WorkerTiming {
  /** How often the one background timer refreshes every lease of the worker. */
  heartbeatMs: number;
  /** How long a claim owns a job before the database may recover it. */
  leaseMs: number;
  /** Silent this long, the worker is marked dead (seven of its heartbeats). */
  deadAfterMs: number;
}

/**
 * The timing of one worker from what it was given: neither (45 s / 180 s),
 * only `heartbeatMs` (the lease is four heartbeats), only `leaseMs` (the
 * heartbeat is a third of it), or both. Unchecked: the worker options
 * schema has checked its input (the public, checked form is
 * src/workerTiming.ts).
 */
export function deriveWorkerTiming(given: { heartbeatMs?: number | undefined; leaseMs?: number | undefined }): WorkerTiming {
  const { heartbeatMs, leaseMs } = given;
  // Derived from a long lease, the heartbeat stays within what heartbeatMs may be given as.
  const derived = (lease: number) => Math.min(MAX_HEARTBEAT_MS, Math.max(1, Math.floor(lease / HEARTBEATS_PER_GIVEN_LEASE)));
  const hb = heartbeatMs ?? (leaseMs !== undefined ? derived(leaseMs) : DEFAULT_HEARTBEAT_MS);
  const lease = leaseMs ?? leaseMsFor(hb);
  return { heartbeatMs: hb, leaseMs: lease, deadAfterMs: deadAfterMsFor(hb) };
}
