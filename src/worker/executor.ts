// Runs handlers: whenever a handler slot is free it starts the oldest
// buffered lease (with the buffered leases of the same type that fit, for a
// batch handler), and hands each outcome to the settlement. Callbacks
// rather than an async function or a promise chain per job: nothing per job
// stays suspended across the handler and the settlement round trip, and no
// promise is made per job beyond the handler's own.
import { JobSpan } from '../telemetry/jobSpans.js';
import { endSpanLater, recordLater } from '../telemetry/telemetryBacklog.js';
import { attrsOf, meters, tracingOn } from '../telemetry/telemetry.js';
import type { ClaimedJob } from '../db/protocol.js';
import type { ContextDeps } from './context.js';
import type { HandlerRegistry } from './handlerRegistry.js';
import { invokeBatch, type BatchHandler } from './invokeBatch.js';
import { invokeHandler, type HandlerEntry, type HandlerOutcome, type Lingering } from './invokeHandler.js';
import type { Lease, LeaseTable } from './leaseTable.js';
import { settleJob, type SettleDeps } from './settleJob.js';

export interface ExecutorDeps {
  table: LeaseTable;
  handlers: HandlerRegistry;
  concurrency: number;
  /** Settlements in flight past which claims wait (claimBatching.ts): falling back under it frees room. */
  settlingCap: number;
  contextDeps: ContextDeps;
  settleDeps: SettleDeps;
  /** A handler slot came free (the claim loop may want to claim). */
  onSlotFree(): void;
  /** A settlement in flight when its lease ran out unreached was refused by the fence: its outcome is dropped. */
  onExpiredDrop(): void;
  /** An attempt ended while its handler still runs LINGER_GRACE_MS later: it ignored its signal (core.ts logs it). */
  onLinger?(job: ClaimedJob, reason: unknown, waitingOnDatabase: boolean): void;
}

export class Executor {
  /** Set when the worker stops: buffered leases are handed back, not started. */
  closed = false;
  /**
   * Handlers still running after their attempt ended (an abort: a timeout,
   * a lost lease, a hard stop) because they ignored their signal. Each keeps
   * its slot taken until it returns, so no more handlers run at once than
   * the concurrency.
   */
  lingering = 0;
  private readonly linger: Lingering = {
    start: () => {
      this.lingering++;
    },
    end: () => {
      this.lingering--;
      this.fill();
      this.d.onSlotFree();
    },
    report: (job, reason, waitingOnDatabase) => this.d.onLinger?.(job, reason, waitingOnDatabase),
  };

  constructor(private readonly d: ExecutorDeps) {}

  /** Handlers running now: those of running leases, and those lingering past their attempt. */
  get busy(): number {
    return this.d.table.running + this.lingering;
  }

  /** Starts buffered leases while handler slots are free. */
  fill(): void {
    const { table, handlers, concurrency } = this.d;
    let tracing: boolean | undefined;
    while (!this.closed && this.busy < concurrency && table.buffered > 0) {
      const lease = table.startNext();
      if (!lease) return;
      tracing ??= tracingOn();
      this.started(lease);
      const entry = handlers.get(lease.job.type)!;
      if (entry.batch) {
        this.runBatch(lease, entry as HandlerEntry & { batch: BatchHandler }, tracing);
        continue;
      }
      if (tracing) lease.span = new JobSpan(lease.job);
      invokeHandler(lease.job, entry, lease.abort, this.d.contextDeps, (outcome) => this.afterHandler(lease, outcome), lease.span, this.linger);
    }
  }

  /** The start of an attempt: its queue lag, and the clock for its duration (both only with a meter provider). */
  private started(lease: Lease): void {
    const m = meters();
    if (!m.on) return;
    lease.startedMs = performance.now();
    recordLater(m.queueLag, Math.max(0, Date.now() - lease.job.runAt.getTime()), attrsOf(lease.job.type));
  }

  /** `first` and the buffered leases of its type that fit, in one batch call. */
  private runBatch(first: Lease, entry: HandlerEntry & { batch: BatchHandler }, tracing: boolean): void {
    const room = Math.min(entry.maxBatch ?? 50, this.d.concurrency - this.busy + 1);
    const mates = this.d.table.startMatesOf(first.job.type, room - 1);
    for (const m of mates) this.started(m);
    const group = [first, ...mates];
    if (tracing) for (const l of group) l.span = new JobSpan(l.job);
    invokeBatch(group, entry, this.d.contextDeps).then(
      (outcomes) => group.forEach((lease, i) => this.afterHandler(lease, outcomes[i]!)),
      (error: unknown) => group.forEach((lease) => this.afterHandler(lease, { ok: false, error })),
    );
  }

  private afterHandler(lease: Lease, outcome: HandlerOutcome): void {
    const { table, settleDeps } = this.d;
    table.handlerDone(lease);
    // The handler's slot is free now; the lease stays held (and heartbeated)
    // until the settlement is written.
    this.fill();
    this.d.onSlotFree();
    // The handler's run time, recorded under what the attempt became (retried and suspended are not failures).
    const ranMs = lease.startedMs >= 0 ? performance.now() - lease.startedMs : -1;
    const lost = lease.lost ? { reason: lease.abort.reason } : null;
    const span = lease.span;
    // The span ends once the settlement is written, with what it became.
    settleJob(lease.job, outcome, lost, settleDeps, (settled) => {
      const status = settled?.status ?? 'unsettled';
      if (ranMs >= 0) recordLater(meters().duration, ranMs, attrsOf(lease.job.type, status));
      if (span) endSpanLater(span, status, settled && 'error' in settled ? settled.error : undefined, performance.now());
      if (!settled) table.markUnsettled(lease);
      // Told from here, where the lease is at hand: a claim of the same job at a newer execution may already have taken its place in the table.
      else if (settled.status === 'stale' && lease.expiredWhileSettling) this.d.onExpiredDrop();
      table.remove(lease);
      // Claims held back by settlements piling up may go on now.
      if (table.settling === this.d.settlingCap) this.d.onSlotFree();
    });
  }
}
