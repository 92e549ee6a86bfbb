// When a claim's answer is too late to start its jobs. The database stamps
// a claimed lease when the claim runs, which may be as early as when it was
// sent; an answer the network held back (a frozen socket that thawed) can
// arrive with those leases about to run out, or already run out, unseen by
// any heartbeat. Starting their handlers then is a race the worker loses:
// the watchdog aborts them, the leases expire with their handlers marked
// started, and recovery counts an attempt for work that never ran. Such a
// claim is treated as one whose answer was lost: nothing starts, and the
// next heartbeat hands its leases back unstarted (no attempt counted).

/**
 * True when a claim sent at `sentAt` (Date.now()) is answered too late to
 * start its jobs: after half a lease, when the leases may have less than two
 * heartbeats left (a beat may be in flight, and the next one an interval away).
 */
export function answeredTooLate(sentAt: number, leaseMs: number, now: number = Date.now()): boolean {
  return now - sentAt > leaseMs / 2;
}
