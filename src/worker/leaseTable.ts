// The leases one worker holds, from claim to settlement, in one table: each
// is `buffered` (claimed, waiting for a free handler slot), `running` (its
// handler is running) or `settling` (the handler returned; the settlement
// is in flight, and the lease is still heartbeated until it is written).
// A lease the database no longer accepts is `lost`: its handler is aborted
// and its settlement refused. Buffered leases start in claim order. A claim
// can hand this worker a job it still holds under an older execution (the
// database lost its leases in a crash, or a peer recovered an expired one):
// the new lease supersedes the old, which leaves the table at once and is
// reported to `onSuperseded` to be aborted; its late writes meet the fence.
import type { ClaimedJob, HeldLease, LeaseRef } from '../db/protocol.js';
import type { JobSpan } from '../telemetry/jobSpans.js';
import { JobAbort } from './jobAbort.js';

export type LeaseState = 'buffered' | 'running' | 'settling';

/** How many leases whose settlement gave up are remembered for the deregistration. */
const MAX_UNSETTLED = 10_000;

export class Lease {
  readonly abort = new JobAbort();
  state: LeaseState = 'buffered';
  lost = false;
  /** Its lease ran out unreached (no heartbeat for a whole lease) while its settlement was in flight. */
  expiredWhileSettling = false;
  /** When the handler started (performance.now()), for the duration metric; -1 if no meter provider was registered then. */
  startedMs = -1;
  /** The attempt's span, when a tracer provider is registered. */
  span: JobSpan | undefined = undefined;
  private finished = false;
  private waiters: (() => void)[] | undefined;

  /** `claimedAt`: when the claim that took the job was sent (Date.now()); its lease runs at least the lease from then. */
  constructor(
    readonly job: ClaimedJob,
    readonly claimedAt: number = Date.now(),
  ) {}

  get started(): boolean {
    return this.state !== 'buffered';
  }

  /** Resolves once the lease leaves the table; the promise is made only when someone waits. */
  done(): Promise<void> {
    if (this.finished) return Promise.resolve();
    return new Promise((resolve) => (this.waiters ??= []).push(resolve));
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    if (this.waiters) for (const w of this.waiters) w();
    this.waiters = undefined;
  }
}

export class LeaseTable {
  private readonly byId = new Map<string, Lease>();
  /** Buffered leases in claim order; entries that started or left are skipped lazily. */
  private queue: Lease[] = [];
  private head = 0;
  private unsettled: LeaseRef[] = [];
  /** How many settlements gave up in all (a tick that had any failed). */
  unsettledCount = 0;
  running = 0;
  buffered = 0;

  get size(): number {
    return this.byId.size;
  }

  /** Leases whose handler finished and whose settlement is being written. */
  get settling(): number {
    return this.byId.size - this.running - this.buffered;
  }

  get(id: string): Lease | undefined {
    return this.byId.get(id);
  }

  /** The lease of this job at this execution, if it is still the one held. */
  at(id: string, execution: number): Lease | undefined {
    const lease = this.byId.get(id);
    return lease && lease.job.execution === execution ? lease : undefined;
  }

  admit(job: ClaimedJob, onSuperseded: (old: Lease) => void, claimedAt?: number): Lease {
    const old = this.byId.get(job.id);
    if (old) {
      this.remove(old);
      onSuperseded(old);
    }
    const lease = new Lease(job, claimedAt);
    this.byId.set(job.id, lease);
    this.queue.push(lease);
    this.buffered++;
    return lease;
  }

  /** The oldest buffered lease, now running. */
  startNext(): Lease | undefined {
    while (this.head < this.queue.length) {
      const lease = this.queue[this.head++]!;
      if (lease.state === 'buffered' && this.byId.get(lease.job.id) === lease) {
        this.markRunning(lease);
        this.compact();
        return lease;
      }
    }
    this.compact();
    return undefined;
  }

  /** Up to `max` more buffered leases of `type` (batch mates), now running. */
  startMatesOf(type: string, max: number): Lease[] {
    const mates: Lease[] = [];
    for (let i = this.head; i < this.queue.length && mates.length < max; i++) {
      const lease = this.queue[i]!;
      if (lease.state === 'buffered' && lease.job.type === type && this.byId.get(lease.job.id) === lease) {
        this.markRunning(lease);
        mates.push(lease);
      }
    }
    return mates;
  }

  /** The handler returned: the slot is free, the lease stays held until its settlement is written. */
  handlerDone(lease: Lease): void {
    if (lease.state !== 'running' || this.byId.get(lease.job.id) !== lease) return;
    lease.state = 'settling';
    this.running--;
  }

  /** The lease leaves the table (settled, refused, or handed back). */
  remove(lease: Lease): void {
    if (this.byId.get(lease.job.id) !== lease) return;
    this.byId.delete(lease.job.id);
    if (lease.state === 'buffered') this.buffered--;
    else if (lease.state === 'running') this.running--;
    lease.finish();
  }

  /** Every lease held, for the heartbeat. */
  held(): HeldLease[] {
    const out: HeldLease[] = [];
    for (const l of this.byId.values()) out.push({ id: l.job.id, execution: l.job.execution, started: l.started, claimedAt: l.claimedAt });
    return out;
  }

  ids(): string[] {
    return [...this.byId.keys()];
  }

  /** Leases whose handler is running or whose settlement is in flight. */
  started(): Lease[] {
    return [...this.byId.values()].filter((l) => l.started);
  }

  /**
   * A lease whose settlement write gave up (a database fault): it left the
   * table but is still held in the database until it expires, so the
   * deregistration names it to expire it at once. The newest
   * MAX_UNSETTLED are kept (older ones have expired by then anyway).
   */
  markUnsettled(lease: Lease): void {
    this.unsettledCount++;
    this.unsettled.push({ id: lease.job.id, execution: lease.job.execution });
    if (this.unsettled.length > MAX_UNSETTLED) this.unsettled.splice(0, this.unsettled.length - MAX_UNSETTLED);
  }

  /** What this process still holds at its stop: every lease left in the table and every one whose settlement gave up. */
  leftAtStop(): LeaseRef[] {
    const left = new Map<string, LeaseRef>();
    for (const l of this.unsettled) left.set(l.id, l);
    for (const l of this.byId.values()) left.set(l.job.id, { id: l.job.id, execution: l.job.execution });
    return [...left.values()];
  }

  /** Removes every buffered lease and returns them (handed back unstarted when a drain begins, or at deregister). */
  takeBuffered(): LeaseRef[] {
    const taken: LeaseRef[] = [];
    for (const l of [...this.byId.values()]) {
      if (l.state !== 'buffered') continue;
      taken.push({ id: l.job.id, execution: l.job.execution });
      this.remove(l);
    }
    return taken;
  }

  private markRunning(lease: Lease): void {
    lease.state = 'running';
    this.buffered--;
    this.running++;
  }

  private compact(): void {
    if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
  }
}
