// Runs handlers: whenever a handler slot is free it starts the oldest
// buffered lease (with the buffered leases of the same type that fit, for a
// batch handler), and hands each outcome to the settlement. Plain promise
// callbacks rather than an async function per job: nothing per job stays
// suspended across the handler and the settlement round trip.
import { endJobSpan, startJobSpan, withJobSpan } from '../telemetry/jobSpans.js';
import { attrsOf, meters, tracingOn } from '../telemetry/telemetry.js';
import type { ContextDeps } from './context.js';
import type { HandlerRegistry } from './handlerRegistry.js';
import { invokeBatch, type BatchHandler } from './invokeBatch.js';
import { invokeHandler, type HandlerEntry, type HandlerOutcome } from './invokeHandler.js';
import type { Lease, LeaseTable } from './leaseTable.js';
import { settleJob, type SettleDeps } from './settleJob.js';

export interface ExecutorDeps {
  table: LeaseTable;
  handlers: HandlerRegistry;
  concurrency: number;
  contextDeps: ContextDeps;
  settleDeps: SettleDeps;
  /** A handler slot came free (the claim loop may want to claim). */
  onSlotFree(): void;
}

export class Executor {
  /** Set when the worker stops: buffered leases are handed back, not started. */
  closed = false;

  constructor(private readonly d: ExecutorDeps) {}

  /** Starts buffered leases while handler slots are free. */
  fill(): void {
    const { table, handlers, concurrency } = this.d;
    let tracing: boolean | undefined;
    while (!this.closed && table.running < concurrency && table.buffered > 0) {
      const lease = table.startNext();
      if (!lease) return;
      tracing ??= tracingOn();
      this.started(lease);
      const entry = handlers.get(lease.job.type)!;
      if (entry.batch) this.runBatch(lease, entry as HandlerEntry & { batch: BatchHandler }, tracing);
      else if (!tracing) this.settleWhenDone(lease, invokeHandler(lease.job, entry, lease.abort, this.d.contextDeps));
      else {
        const { span, ctx } = startJobSpan(lease.job);
        lease.span = span;
        this.settleWhenDone(lease, withJobSpan(ctx, () => invokeHandler(lease.job, entry, lease.abort, this.d.contextDeps)));
      }
    }
  }

  /** The start of an attempt: its queue lag, and the clock for its duration. */
  private started(lease: Lease): void {
    lease.startedMs = performance.now();
    meters().queueLag.record(Math.max(0, Date.now() - lease.job.runAt.getTime()), attrsOf(lease.job.type));
  }

  /** `first` and the buffered leases of its type that fit, in one batch call. */
  private runBatch(first: Lease, entry: HandlerEntry & { batch: BatchHandler }, tracing: boolean): void {
    const room = Math.min(entry.maxBatch ?? 50, this.d.concurrency - this.d.table.running + 1);
    const mates = this.d.table.startMatesOf(first.job.type, room - 1);
    for (const m of mates) this.started(m);
    const group = [first, ...mates];
    if (tracing) for (const l of group) l.span = startJobSpan(l.job).span;
    const outcomes = invokeBatch(group, entry, this.d.contextDeps);
    group.forEach((lease, i) => this.settleWhenDone(lease, outcomes.then((o) => o[i]!)));
  }

  private settleWhenDone(lease: Lease, running: Promise<HandlerOutcome>): void {
    running.then(
      (outcome) => this.afterHandler(lease, outcome),
      (error: unknown) => this.afterHandler(lease, { ok: false, error }),
    );
  }

  private afterHandler(lease: Lease, outcome: HandlerOutcome): void {
    const { table, settleDeps } = this.d;
    table.handlerDone(lease);
    // The handler's slot is free now; the lease stays held (and heartbeated)
    // until the settlement is written.
    this.fill();
    this.d.onSlotFree();
    meters().duration.record(performance.now() - lease.startedMs, attrsOf(lease.job.type, outcome.ok ? 'succeeded' : 'failed'));
    const lost = lease.lost ? { reason: lease.abort.reason } : null;
    const span = lease.span;
    if (!span) {
      settleJob(lease.job, outcome, lost, settleDeps, () => table.remove(lease));
      return;
    }
    // The span ends once the settlement is written, with what it became.
    let status = 'unsettled';
    let error: unknown;
    const deps: SettleDeps = {
      ...settleDeps,
      onSettled: (o) => {
        status = o.status;
        if ('error' in o) error = o.error;
        settleDeps.onSettled(o);
      },
    };
    settleJob(lease.job, outcome, lost, deps, () => {
      endJobSpan(span, status, error);
      table.remove(lease);
    });
  }
}
