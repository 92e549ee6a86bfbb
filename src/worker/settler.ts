// Group commit for settlements. Handlers finish one at a time; the settler
// collects their outcomes and writes each batch in one complete_many_v1, one
// fail_many_v1 and one suspend_many_v1 statement. While a batch is in flight the next one fills,
// so no delay is added and a busy worker settles in large batches.
//
// Callbacks rather than a promise per job: a settlement waits a database
// round trip, and per-job promises and async frames alive across it are
// what a busy worker's garbage collector spent most of its time promoting.
// A batch that hits a database fault is written again (capped backoff) as a
// whole until it goes through or the worker stops hard; the fence makes a
// repeat of an already committed batch harmless (its jobs come back as not
// accepted). A lease has no expiry in the fence, so a settlement written
// after a long outage still counts unless recovery took the job meanwhile.
// A statement PostgreSQL cancels (57014: a statement_timeout on the role or
// the database, pg_cancel_backend) or ends for its lock_timeout (55P03: a
// lock another session holds on the table, a CREATE INDEX or an ALTER
// TABLE, outlasted it) is written again the same way, but only
// for a lease window counted from its first cancellation: the leases are
// still held (and heartbeated) meanwhile, so the outcome is not lost and no
// attempt is counted, while a timeout no settlement can ever beat gives up
// in bounded time and leaves the jobs to recovery, as before. Only here:
// elsewhere a cancelled statement stays an error (a handler's own
// statement_timeout must fail its attempt, not loop).
// A refusal an operator ends without a code change (a protocol function or
// table dropped, the login's grants revoked, a full disk: operatorFixable.ts)
// is written again the same way, within the same window: before, it gave
// up at once, and workers went on claiming and throwing every outcome away
// while recovery charged the attempts until the queue was `failed`.
// While any of these writes keep failing, `failing` holds claims back
// (claimBatching.ts).
// A batch the database refuses for another reason (a value it cannot store)
// is written again one member at a time, so only the member it refuses is
// left to recovery and the rest of its batch settles.
// A batch given up is reported once, with how many outcomes it dropped
// (`onDropped`), and counted in `dropped`: those jobs run again after their
// leases expire, and recovery counts an attempt.
import {
  postgresProtocol,
  type Completion,
  type Failure,
  type Protocol,
  type Queryable,
  type Suspension,
} from '../db/protocol.js';
import { jobAttempts } from '../db/dashboard.js';
import { retryTransient } from '../db/retryTransient.js';
import { isOperatorFixable } from '../db/operatorFixable.js';
import { isLockTimeout, isQueryCanceled } from '../db/sqlState.js';
import { isTransientDbError } from '../db/transient.js';

export type SettleOutcome =
  | { accepted: true; status: 'succeeded' | 'ready' | 'failed' | 'waiting'; runAt?: Date }
  | { accepted: false };

/**
 * Called once per settlement: with the outcome, or with the error that made
 * the write give up. Answers true when, given up, the caller settles the job
 * another way (a result the database refused, failed for good instead), so
 * the outcome does not count as dropped. Must not throw.
 */
export type SettleCallback = (outcome: SettleOutcome | undefined, error?: unknown) => boolean | void;

/** A batch given up: the error, and how many outcomes were dropped with it (their jobs left to recovery). */
export type DroppedCallback = (error: unknown, count: number, jobIds: string[]) => void;

interface Pending<T> {
  item: T;
  done: SettleCallback;
}

const SUCCEEDED: SettleOutcome = Object.freeze({ accepted: true, status: 'succeeded' });
const REFUSED: SettleOutcome = Object.freeze({ accepted: false });

/** A failure's or suspension's answer: each accepted id with its new status and run_at; an id left out was refused. */
function keyedOutcome<T extends { id: string }>(
  accepted: Map<string, { status: 'ready' | 'failed' | 'waiting'; runAt: Date }>,
  p: Pending<T>,
): SettleOutcome {
  const o = accepted.get(p.item.id);
  return o ? { accepted: true, status: o.status, runAt: o.runAt } : REFUSED;
}

export interface SettlerOptions {
  /** How long a write PostgreSQL keeps cancelling (57014) or refusing for an operator to fix is written again, from its first such failure: the lease window. */
  cancelledRetryMs?: number;
  /** Told once per batch given up, with how many outcomes it dropped. */
  onDropped?: DroppedCallback;
  /** Told each time a write goes through (a fault in progress is over). */
  onWritten?: () => void;
}

/** The fleet's default lease window (4 heartbeats of 45 s). */
const DEFAULT_CANCELLED_RETRY_MS = 180_000;

/** Refused for now, not for what it writes: a cancelled statement, one its lock_timeout ended, or a refusal an operator can end. */
function isRefusedForNow(err: unknown): boolean {
  return isQueryCanceled(err) || isLockTimeout(err) || isOperatorFixable(err);
}

export class Settler {
  private completions: Pending<Completion>[] = [];
  private failures: Pending<Failure>[] = [];
  private suspensions: Pending<Suspension>[] = [];
  private flushing: Promise<void> | undefined;
  /** A write failed and is being retried, and none has gone through since: claims hold back (claimBatching.ts). */
  failing = false;
  /** Outcomes given up so far (their jobs left to recovery), for the drain's summary. */
  dropped = 0;
  private readonly abandoned = new AbortController();
  private readonly cancelledRetryMs: number;
  private readonly onDropped: DroppedCallback;
  private readonly onWritten: () => void;

  constructor(
    private readonly db: Queryable,
    private readonly namespace: string,
    /** Told about each failed write that will be retried. */
    private readonly onRetry: (err: unknown, delayMs: number) => void = () => undefined,
    private readonly protocol: Protocol = postgresProtocol,
    options: SettlerOptions = {},
  ) {
    this.cancelledRetryMs = options.cancelledRetryMs ?? DEFAULT_CANCELLED_RETRY_MS;
    this.onDropped = options.onDropped ?? (() => undefined);
    this.onWritten = options.onWritten ?? (() => undefined);
  }

  /** Stops retrying (a hard stop): writes in flight give up and their leases are left to recovery. */
  abandon(): void {
    this.abandoned.abort();
  }

  complete(completion: Completion, done: SettleCallback): void {
    this.completions.push({ item: completion, done });
    this.schedule();
  }

  fail(failure: Failure, done: SettleCallback): void {
    this.failures.push({ item: failure, done });
    this.schedule();
  }

  /** Suspends a job on its durable wait (batched with the others, like completions). */
  suspend(item: Suspension, done: SettleCallback): void {
    this.suspensions.push({ item, done });
    this.schedule();
  }

  /** Resolves when everything queued so far is written. */
  async drain(): Promise<void> {
    while (this.flushing || this.completions.length || this.failures.length || this.suspensions.length) {
      this.schedule();
      await this.flushing;
    }
  }

  private schedule(): void {
    if (this.flushing) return;
    this.flushing = (async () => {
      try {
        while (this.completions.length || this.failures.length || this.suspensions.length) await this.flushOnce();
      } finally {
        this.flushing = undefined;
      }
    })();
  }

  private async flushOnce(): Promise<void> {
    const done = this.completions;
    const failed = this.failures;
    const suspended = this.suspensions;
    this.completions = [];
    this.failures = [];
    this.suspensions = [];
    await Promise.all([this.writeCompletions(done), this.writeFailures(failed), this.writeSuspensions(suspended)]);
  }

  private writeCompletions(batch: Pending<Completion>[]): Promise<void> {
    return this.writeBatch(
      batch,
      (items) => this.protocol.completeMany(this.db, this.namespace, items),
      (accepted, p) => (accepted.has(p.item.id) ? SUCCEEDED : REFUSED),
      (p) => this.committedCompletion(p.item),
    );
  }

  private writeFailures(batch: Pending<Failure>[]): Promise<void> {
    return this.writeBatch(batch, (items) => this.protocol.failMany(this.db, this.namespace, items), keyedOutcome, (p) => this.committedFailure(p.item));
  }

  private writeSuspensions(batch: Pending<Suspension>[]): Promise<void> {
    return this.writeBatch(batch, (items) => this.protocol.suspendMany(this.db, this.namespace, items), keyedOutcome, (p) => this.committedSuspension(p.item));
  }

  // A settlement a retried write found refused may have been committed by an
  // earlier try whose answer was lost with its connection. Reported stale, it
  // said the attempt was discarded and the job would run again (and, after a
  // stall longer than the lease, counted as given up: a drain exited 3) when
  // it was what the database holds. Each check below matches only this
  // settlement's own write; a read that fails leaves it refused.

  /** The job succeeded under this very execution: only this completion writes that (recovery never ends a job succeeded). */
  private async committedCompletion(c: Completion): Promise<SettleOutcome | undefined> {
    const job = await this.protocol.getJob(this.db, this.namespace, c.id);
    return job?.status === 'succeeded' && job.execution === c.execution ? SUCCEEDED : undefined;
  }

  /** The attempts ledger holds this execution's failure (recovery writes `recovered` or `orphaned` there instead). */
  private async committedFailure(f: Failure): Promise<SettleOutcome | undefined> {
    const attempts = await jobAttempts(this.db, this.namespace, f.id);
    const mine = attempts.find((a) => a.execution === f.execution && (a.outcome === 'retried' || a.outcome === 'failed'));
    return mine ? { accepted: true, status: mine.outcome === 'retried' ? 'ready' : 'failed' } : undefined;
  }

  /** The job waits under this very execution: only this suspension writes that. */
  private async committedSuspension(s: Suspension): Promise<SettleOutcome | undefined> {
    const job = await this.protocol.getJob(this.db, this.namespace, s.id);
    return job?.status === 'waiting' && job.execution === s.execution ? { accepted: true, status: 'waiting', runAt: job.runAt } : undefined;
  }

  /**
   * Writes a batch in one statement; when the database refuses it for a
   * reason other than a fault (retried inside), writes each member alone, so
   * one member it cannot take does not leave the others to recovery.
   */
  private async writeBatch<T extends { id: string }, A>(
    batch: Pending<T>[],
    write: (items: T[]) => Promise<A>,
    outcomeOf: (answer: A, p: Pending<T>) => SettleOutcome,
    committedEarlier?: (refused: Pending<T>) => Promise<SettleOutcome | undefined>,
  ): Promise<void> {
    if (!batch.length) return;
    let answer: A;
    const tries = { retried: false };
    try {
      answer = await this.withRetries(() => write(batch.map((p) => p.item)), tries);
    } catch (err) {
      // A fault or a cancellation past its window is not about one member: splitting would not help.
      if (batch.length === 1 || isTransientDbError(err) || isRefusedForNow(err) || this.abandoned.signal.aborted) {
        this.giveUp(batch, err);
        return;
      }
      for (const p of batch) await this.writeBatch([p], write, outcomeOf, committedEarlier); // one at a time: the pool is shared with the handlers
      return;
    }
    const outcomes = batch.map((p) => outcomeOf(answer, p));
    // A write tried again may have committed on an earlier try whose answer was lost: the fence then refuses the retry.
    if (tries.retried && committedEarlier) {
      for (let i = 0; i < batch.length; i++) {
        if (!outcomes[i]!.accepted) outcomes[i] = (await committedEarlier(batch[i]!).catch(() => undefined)) ?? outcomes[i]!;
      }
    }
    batch.forEach((p, i) => p.done(outcomes[i]!));
  }

  /** Tells each member the write gave up, then reports (and counts) the outcomes dropped: those the callers did not settle another way. */
  private giveUp<T extends { id: string }>(batch: Pending<T>[], err: unknown): void {
    const dropped: string[] = [];
    for (const p of batch) if (p.done(undefined, err) !== true) dropped.push(p.item.id);
    if (dropped.length === 0) return;
    this.dropped += dropped.length;
    this.onDropped(err, dropped.length, dropped);
  }

  /**
   * A database fault is waited out; a cancelled statement, a lock timeout
   * or a refusal an operator can end, for the lease window; any other error
   * gives up at once (the leases expire and recovery takes over).
   */
  private withRetries<T>(fn: () => Promise<T>, tries: { retried: boolean }): Promise<T> {
    let firstCancelled: number | undefined;
    const withinWindow = (err: unknown): boolean => {
      if (!isRefusedForNow(err)) return false;
      const now = performance.now();
      firstCancelled ??= now;
      return now - firstCancelled < this.cancelledRetryMs;
    };
    const onRetry = (err: unknown, delayMs: number): void => {
      this.failing = true;
      tries.retried = true;
      this.onRetry(err, delayMs);
    };
    return retryTransient(fn, { signal: this.abandoned.signal, baseMs: 100, maxMs: 5000, alsoRetry: withinWindow, onRetry }).then((r) => {
      this.failing = false;
      this.onWritten();
      return r;
    });
  }
}
