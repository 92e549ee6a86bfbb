// The one coordination knob. Everything else about time is derived from the
// heartbeat interval, never set separately, so replicas that agree on the
// heartbeat agree on everything else by construction.

export const DEFAULT_HEARTBEAT_MS = 45_000;
/** A lease lasts four heartbeats. */
export const LEASE_HEARTBEATS = 4;
/** A worker silent for seven heartbeats is dead. */
export const DEAD_HEARTBEATS = 7;

export function leaseMsFor(heartbeatMs: number): number {
  return heartbeatMs * LEASE_HEARTBEATS;
}

export function deadAfterMsFor(heartbeatMs: number): number {
  return heartbeatMs * DEAD_HEARTBEATS;
}
