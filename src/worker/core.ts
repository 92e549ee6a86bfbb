// What every worker is, whichever loop drives it (the long-lived run loop or
// a tick pass): its registration, its lease table, the one heartbeat timer,
// the claim, the executor that runs handlers and the settler that writes
// their outcomes in batches, and its local and operator pause. Every call
// to the database goes through the client's protocol on a GuardedDb, so no
// database fault can crash or hang the worker.
import type { EventEmitter } from 'node:events';
import type { Client } from '../client/client.js';
import { buildJobInsert } from '../client/enqueueInput.js';
import { GuardedDb } from '../db/guardedDb.js';
import type { ClaimedJob, Protocol } from '../db/protocol.js';
import { retryTransient } from '../db/retryTransient.js';
import { operatorHint } from '../db/operatorFixable.js';
import { describeDbError, isTransientDbError } from '../db/transient.js';
import type { FaultReport } from '../faultSpell.js';
import { SettlementDroppedError, StaleLeaseError, WorkerNotRegisteredError, WorkerStalledError } from '../errors.js';
import { settledWithin } from '../boundedWait.js';
import { freeRoom, rotatedQueues, settlingCap } from './claimBatching.js';
import { Executor } from './executor.js';
import type { HandlerRegistry } from './handlerRegistry.js';
import { Heartbeat, type BlindSpell } from './heartbeat.js';
import { answeredTooLate, handBackLateClaim, type LateClaimDeps } from './lateClaim.js';
import { LeaseTable, type Lease } from './leaseTable.js';
import { LostClaims } from './lostClaims.js';
import type { ResolvedWorkerOptions } from './options.js';
import { reportLingering, reportStale, reportWorkerError, workerFaultReporter } from './reportError.js';
import { Settler } from './settler.js';
import type { WakeReason } from './waiter.js';
import type { WorkerEvents } from './workerTypes.js';
import { SettledCounts } from '../telemetry/settledCounts.js';
import { meters } from '../telemetry/telemetry.js';
import { currentTraceContext } from '../telemetry/traceContext.js';
import { flushTelemetry, flushWhileClaiming } from '../telemetry/telemetryBacklog.js';

/** A protocol call (claim, settle, register) may take this long before its connection is destroyed. */
const PROTOCOL_CALL_TIMEOUT_MS = 60_000;

/** How long one heartbeat call may take: its interval, at least 1 s (a lease is 4 intervals, so a beat cut short is tried again about three times before the leases expire). */
function heartbeatCallMs(heartbeatMs: number): number {
  return Math.max(1_000, heartbeatMs);
}
const DEREGISTER_ATTEMPTS = 5;
/**
 * A stop against a hung server: deregistration is a courtesy (leases left
 * behind expire and are recovered, as after a crash), so shutdown waits for
 * a beat or a claim in flight and for deregistration at most this long in
 * all, and a try of deregistration at most DEREGISTER_CALL_TIMEOUT_MS.
 */
export const SHUTDOWN_BOUND_MS = 20_000;
const DEREGISTER_CALL_TIMEOUT_MS = 5_000;

/**
 * What a settlement fault's first line says the worker does about it (the
 * rest of the fault is one line when it ends); the line adds, for a refusal
 * an operator can end, what to do about it (faultHint).
 */
function settleFaultLine(err: unknown, leaseMs: number): string {
  if (!operatorHint(err)) return 'database fault; the outcomes are kept and written again with backoff';
  return `refused; the outcomes are kept and written again for up to the lease (${leaseMs} ms)`;
}

export interface CoreSetup {
  client: Client;
  handlers: HandlerRegistry;
  events: EventEmitter<WorkerEvents>;
  options: ResolvedWorkerOptions;
  kind: 'process' | 'tick';
  /** When handlers are aborted (a tick's abort instant), or null. Handlers see it as ctx.deadline. */
  deadline: Date | null;
  /** An instant no database call of this core outlasts (a tick's: shortly before its deadline), or undefined. */
  callsEndBy?: number;
  /** Something happened the claim loop may act on. */
  wake(reason: Extract<WakeReason, 'slot' | 'hint'>): void;
  /** Where a lost lease's or a lingering handler's line goes when no `stale` listener takes it (a tick's `log`); default stderr. */
  log?: (line: string) => void;
}

export class WorkerCore {
  readonly table = new LeaseTable();
  /** Settlements tallied for the settled counter, added at each claim. */
  private readonly settledCounts = new SettledCounts();
  readonly leaseMs: number;
  registered = false;
  localPaused = false;
  operatorPaused = false;
  private readonly protocol: Protocol;
  private readonly db: GuardedDb;
  /** The pool as this core's protocol calls use it, bounded the same way: for a tick's own calls beside them. */
  get boundedDb(): GuardedDb {
    return this.db;
  }
  private readonly deregisterDb: GuardedDb;
  private readonly heartbeat: Heartbeat;

  /** Handlers still running after their attempt ended (they ignored ctx.signal): each is reported LINGER_GRACE_MS after its abort. */
  get lingeringHandlers(): number {
    return this.executor.lingering;
  }

  /** Expired leases of other workers the heartbeats' recovery passes returned (a tick's summary counts them). */
  recoveredByBeats = 0;

  /** How long the heartbeats have been failing, or 0 (the readiness probe reads it). */
  get heartbeatFailingMs(): number {
    return this.heartbeat.failingMs;
  }
  private readonly settler: Settler;
  private readonly executor: Executor;
  private registering: Promise<void> | undefined;
  private claimInFlight: Promise<unknown> | undefined;
  /** A claim is between its call and the admission of what it returned. */
  private claiming = false;
  /** Claims that failed after they may have committed (their answer lost), for the heartbeat to hand back. */
  private readonly lostClaims = new LostClaims();
  /** Running handlers whose lease ran out with no heartbeat reaching the database: their outcomes are not written. */
  private expiredOutcomes = 0;
  /** Running handlers a stall's expiry aborted, for its WorkerStalledError (onLate). */
  private stalledRunning = 0;
  private queueCursor = 0;
  /** Aborted by a hard stop: ends settlement and deregister retries. */
  private readonly giveUp = new AbortController();
  /** The heartbeat's faults (a line when one begins and one when it ends). */
  private readonly beatFaults: FaultReport;
  /** The settlement writes' faults, likewise. */
  private readonly settleFaults: FaultReport;

  constructor(private readonly s: CoreSetup) {
    const { client, options } = s;
    this.protocol = client.protocol;
    this.leaseMs = options.leaseMs;
    const endBy = s.callsEndBy;
    const faults = workerFaultReporter(s.events, options.workerId);
    this.beatFaults = faults('heartbeat');
    this.settleFaults = faults('settlement');
    this.db = new GuardedDb(client.pool, { timeoutMs: Math.max(PROTOCOL_CALL_TIMEOUT_MS, this.leaseMs), endBy });
    this.deregisterDb = new GuardedDb(client.pool, { timeoutMs: DEREGISTER_CALL_TIMEOUT_MS, endBy });
    this.settler = new Settler(this.db, client.namespace, (err) => this.settleFaults.failed(err, settleFaultLine(err, this.leaseMs)), this.protocol, {
      cancelledRetryMs: this.leaseMs,
      onWritten: () => this.settleFaults.ok(),
      onDropped: (err, count, ids) => {
        const hint = operatorHint(err);
        const reason = `${describeDbError(err)}${hint ? `; ${hint}` : ''}`;
        this.emitError(new SettlementDroppedError(count, ids, reason, { cause: err }), 'settlement given up');
      },
    });
    this.heartbeat = new Heartbeat({
      protocol: this.protocol,
      // A beat is given one heartbeat interval (at least 1 s), not the whole lease: one that lands on a
      // frozen connection is cut (the connection destroyed) and tried again on another while the
      // leases still hold. Given the lease, it waited until they had all expired.
      db: new GuardedDb(client.pool, { timeoutMs: heartbeatCallMs(options.heartbeatMs), endBy }),
      namespace: client.namespace,
      workerId: options.workerId,
      intervalMs: options.heartbeatMs,
      leaseMs: this.leaseMs,
      recoverLimit: options.recoverLimit,
      leases: () => this.table.held(),
      active: () => this.executor.busy,
      lostClaims: () => this.lostClaims.forBeat(this.claiming),
      released: (n) => this.lostClaims.releasedUpTo(n),
      onLost: (id, execution) => this.loseLease(this.table.at(id, execution), 'heartbeat'),
      onExpired: (id, execution, stalledMs) => {
        const lease = this.table.at(id, execution);
        const running = lease?.state === 'running';
        const lost = this.loseLease(lease, 'heartbeat', this.leaseMs, stalledMs);
        if (lost && running && stalledMs !== undefined) this.stalledRunning++;
        return lost;
      },
      // The line says how many handlers were aborted: a handler that blocked the loop and then returned was not.
      onLate: (lateMs, expired) => {
        const aborted = this.stalledRunning;
        this.stalledRunning = 0;
        this.emitError(new WorkerStalledError(lateMs, this.leaseMs, expired, aborted), 'stalled');
      },
      onResult: (hb) => {
        this.beatFaults.ok();
        this.recoveredByBeats += hb.recovered;
        return this.applyRegistry(hb);
      },
      // One line when a fault begins and one when it ends. Leases that run out meanwhile are each
      // reported as lost (reportStale), so the lines between say nothing new.
      onError: (err) =>
        this.beatFaults.failed(
          err,
          this.table.held().length === 0
            ? undefined
            : `database fault; the leases are held for up to a lease (${this.leaseMs} ms) from the last beat that reached the database, and the beat is tried again sooner`,
        ),
    });
    this.executor = new Executor({
      table: this.table,
      handlers: s.handlers,
      concurrency: options.concurrency,
      settlingCap: settlingCap(options),
      contextDeps: {
        db: this.db,
        protocol: this.protocol,
        namespace: client.namespace,
        workerId: options.workerId,
        deadline: s.deadline,
        txIdleTimeoutMs: 2 * options.heartbeatMs,
        txStatementTimeoutMs: this.leaseMs,
        refusalWindowMs: this.leaseMs,
        writeFaults: faults('handler writes'),
        maxProgressBytes: client.maxPayloadBytes,
        childRow: (job, payload, opts) => {
          const row = buildJobInsert(typeof job === 'string' ? client.definition(job) : job, payload, opts, client.maxPayloadBytes);
          // A child carries its parent attempt's span (the active one) as an enqueue carries the caller's.
          const traceContext = currentTraceContext();
          if (traceContext) row.trace_context = traceContext;
          return row;
        },
      },
      settleDeps: {
        settler: this.settler,
        retryDelayMs: options.retryDelayMs,
        onStale: (error, j) => reportStale(s.events, s.options.workerId, error, j, () => this.jobStatus(j.id), s.log),
        onSettled: (o) => {
          this.settledCounts.add(o.job.type, o.status);
          s.events.emit('settled', o);
        },
        onError: (err) => this.emitError(err, 'settlement'),
      },
      onSlotFree: () => s.wake('slot'),
      onExpiredDrop: () => this.expiredOutcomes++,
      onLinger: (job, reason, waitingOnDatabase) => reportLingering(s.options.workerId, job, reason, waitingOnDatabase, s.log),
    });
  }

  /** Handlers' outcomes this worker gave up writing so far (their jobs left to recovery): settlements given up, and leases that ran out unreached. */
  get droppedOutcomes(): number {
    return this.settler.dropped + this.expiredOutcomes;
  }

  get paused(): boolean {
    return this.localPaused || this.operatorPaused;
  }

  get closed(): boolean {
    return this.executor.closed;
  }

  /** Room for claiming: concurrency + prefetch, less running handlers (lingering ones too) and buffered leases (and settlements piling up while they fail: claimBatching.ts). */
  get freeRoom(): number {
    const { buffered, settling } = this.table;
    // Settlements in flight count only while their writes are failing: a healthy worker's lag is its batching.
    return freeRoom(this.s.options, this.executor.busy, buffered, this.settler.failing ? settling : 0);
  }

  /** Checks the schema (once per client) and registers; concurrent calls share one. */
  register(): Promise<void> {
    this.registering ??= (async () => {
      await this.s.client.ready();
      const o = this.s.options;
      await this.protocol.registerWorker(this.db, this.s.client.namespace, {
        workerId: o.workerId,
        build: o.build,
        kind: this.s.kind,
        queues: o.queues,
        types: this.s.handlers.types,
        concurrency: o.concurrency,
        heartbeatMs: o.heartbeatMs,
        deadline: this.s.deadline,
      });
      this.registered = true;
      this.operatorPaused = false;
    })().finally(() => {
      this.registering = undefined;
    });
    return this.registering;
  }

  /**
   * What the registry says (a heartbeat's or a registry refresh's answer):
   * the operator pause, and whether the row still exists (if not, register
   * again). Until an answer arrives, the last pause decision stands.
   */
  async applyRegistry(r: { registered: boolean; paused: boolean }): Promise<void> {
    const wasPaused = this.paused;
    this.operatorPaused = r.paused;
    if (wasPaused && !this.paused) this.s.wake('hint');
    if (!r.registered && !this.executor.closed) await this.register();
  }

  /** When the next delayed job of this worker's queues comes due (ms, at most `withinMs` ahead), or null. */
  nextDue(withinMs: number): Promise<number | null> {
    if (this.s.handlers.size === 0) return Promise.resolve(null);
    return this.protocol.nextDue(this.db, this.s.client.namespace, this.s.options.queues, this.s.handlers.types, withinMs);
  }

  /**
   * Runs a call that registers this worker as a side effect (the tick's
   * merged start, tick_start_v2) and records that it did.
   */
  async registerWith<T>(start: () => Promise<T>): Promise<T> {
    const result = await start();
    this.registered = true;
    this.operatorPaused = false;
    return result;
  }

  startHeartbeat(): void {
    this.heartbeat.start();
  }

  /** What handing back a claim answered too late needs (lateClaim.ts). */
  private get lateClaimDeps(): LateClaimDeps {
    return {
      protocol: this.protocol,
      db: this.db,
      namespace: this.s.client.namespace,
      workerId: this.s.options.workerId,
      leaseMs: this.leaseMs,
      table: this.table,
      supersede: (old) => void this.loseLease(old, 'reclaim'),
      unreleased: (sentAt) => this.lostClaims.add(sentAt),
      emitError: (err) => this.emitError(err),
    };
  }

  /** The last spell this worker could not see the database (heartbeat.ts), or undefined. */
  lastBlindSpell(): BlindSpell | undefined {
    return this.heartbeat.lastBlindSpell();
  }

  /** Heartbeats now (or joins the beat in flight). */
  beat(): Promise<void> {
    return this.registered ? this.heartbeat.beat() : Promise.resolve();
  }

  /**
   * Claims up to the free room in one statement, admits the jobs to the
   * lease table and starts what fits. `maxTimeoutMs`: a tick's time left (only
   * jobs that fit it). A worker whose registry row is gone registers again.
   */
  async claim(maxTimeoutMs: number | null = null): Promise<Lease[]> {
    const limit = this.freeRoom;
    if (limit <= 0 || this.s.handlers.size === 0 || this.executor.closed) return [];
    if (maxTimeoutMs !== null && maxTimeoutMs <= 0) return [];
    this.settledCounts.flush();
    // A beat releasing the leases of a lost claim releases every lease of this worker it does not name that
    // was taken in its window: a claim sent before its statement runs would have its leases released too.
    await this.lostClaims.beforeClaim(() => this.heartbeat.pending());
    this.claiming = true;
    const sentAt = Date.now();
    const claiming = this.protocol.claimMany(this.db, this.s.client.namespace, {
      workerId: this.s.options.workerId,
      queues: rotatedQueues(this.s.options.queues, this.queueCursor++),
      types: this.s.handlers.types,
      limit,
      leaseMs: this.leaseMs,
      maxTimeoutMs,
      // The jobs started at once are marked started in their leases; the
      // rest wait in the buffer and are marked by a heartbeat. A tick marks
      // none: one whose claim's answer never comes (a fault) dies with no
      // heartbeat to hand the leases back, and recovery counted an attempt for
      // each; it beats once their handlers have started (below), which marks them.
      start: this.s.kind === 'tick' ? 0 : Math.max(0, this.s.options.concurrency - this.executor.busy - this.table.buffered),
    }).then(async (jobs) => {
      // Answered too late to start (lateClaim.ts): handed back before the claim counts as done, so a stop waits for it.
      if (jobs.length === 0 || !answeredTooLate(sentAt, this.leaseMs)) return jobs;
      await handBackLateClaim(this.lateClaimDeps, jobs, sentAt);
      return [];
    });
    // The SDK's work for the jobs before runs during the claim's round trip.
    flushWhileClaiming();
    // shutdown() waits for an in-flight claim, so what it returns is admitted
    // (and, when stopping, handed back by deregister) rather than orphaned.
    this.claimInFlight = claiming.catch(() => undefined);
    let jobs: ClaimedJob[];
    try {
      jobs = await claiming;
    } catch (err) {
      this.claiming = false;
      // The claim may have committed with its answer lost: the next heartbeat hands back what it leased.
      if (isTransientDbError(err)) this.lostClaims.add(sentAt);
      if (err instanceof WorkerNotRegisteredError) await this.register();
      throw err;
    }
    let leases: Lease[];
    try {
      if (jobs.length === 0) return [];
      meters().claimed.add(jobs.length);
      this.s.events.emit('claimed', jobs);
      leases = jobs.map((job) => this.table.admit(job, (old) => this.loseLease(old, 'reclaim'), sentAt));
    } finally {
      this.claiming = false;
    }
    this.executor.fill();
    // A tick's claim marked nothing started: this beat marks the handlers it just started (a tick killed
    // while they run counts their attempt, as a worker's crash does).
    if (this.s.kind === 'tick' && leases.length > 0) void this.beat();
    return leases;
  }

  /** Aborts every running handler (a tick's abort instant, a hard stop). */
  abortRunning(reason: unknown): void {
    for (const l of this.table.started()) l.abort.abort(reason);
  }

  /** No more handlers start; buffered leases wait to be handed back. */
  close(): void {
    this.executor.closed = true;
  }

  /** A hard stop: settlement and deregister retries give up (the leases expire and are recovered). */
  abandon(): void {
    this.giveUp.abort();
    this.settler.abandon();
  }

  /**
   * Waits until every started handler has settled. A stop's drain (claims
   * closed) begins with beginDrain, beside the handlers; shutdown waits for
   * it within its own bound (a hung server does not make the stop longer).
   */
  async drain(): Promise<void> {
    if (this.executor.closed && !this.drainBegun) this.drainBegun = this.beginDrain();
    for (;;) {
      const started = this.table.started();
      if (started.length === 0) break;
      await Promise.all(started.map((l) => l.done()));
    }
    await this.settler.drain();
  }

  /** The drain's start (beginDrain), once a stop's drain began. */
  private drainBegun: Promise<void> | undefined;

  /**
   * A stop's drain begins: the registry row says draining, and the buffer
   * (claimed jobs no handler started) goes back at once, so other workers
   * need not wait for this drain, nor for a whole lease if it ends at once.
   * A tick, which deregisters as soon as its handlers are done, calls it only
   * to hand a buffer back. What the call could not hand back expires (its
   * jobs are recovered with no attempt counted): naming the ids again at
   * deregistration, which matches them by id, could release the lease of a
   * later claim if the call was answered late.
   */
  private async beginDrain(): Promise<void> {
    if (!this.registered || (this.s.kind === 'tick' && this.table.buffered === 0)) return;
    const leases = this.table.takeBuffered();
    try {
      await this.protocol.beginDrain(this.deregisterDb, this.s.client.namespace, this.s.options.workerId, leases);
    } catch (err) {
      // Only the registry's state was at stake without a buffer: deregistration reports a database that is gone.
      if (leases.length > 0) this.emitError(err, 'the drain could not hand back the unstarted jobs; their leases expire and recovery returns them');
    }
  }

  /**
   * Stops the heartbeat, waits (bounded) for what is in flight and
   * deregisters. Every caller waits for the one shutdown: a drain turned
   * hard calls it twice at once (the stop and the loop), and the second
   * returned at once, so `await worker.stop({ timeoutMs })` could resolve
   * before the deregistration was written (a `client.close()` next could
   * cut it, leaving the registry row draining).
   */
  shutdown(): Promise<void> {
    return (this.shuttingDown ??= this.shutDownOnce());
  }

  private shuttingDown: Promise<void> | undefined;

  private async shutDownOnce(): Promise<void> {
    // A beat or a claim held by a hung server is waited for only so long: what a
    // late claim leases is recovered once its leases expire.
    const boundMs = Math.max(0, Math.min(SHUTDOWN_BOUND_MS, (this.s.callsEndBy ?? Infinity) - Date.now()));
    const bound = AbortSignal.timeout(boundMs);
    const deadline = Date.now() + boundMs;
    await settledWithin(this.heartbeat.stop(), Math.min(DEREGISTER_CALL_TIMEOUT_MS, deadline - Date.now()));
    await settledWithin(this.claimInFlight, Math.max(0, deadline - Date.now()));
    // What it could not hand back (it failed, or is still in flight) expires.
    await settledWithin(this.drainBegun, Math.max(0, deadline - Date.now()));
    this.settledCounts.flush();
    flushTelemetry();
    if (!this.registered) return;
    this.registered = false;
    const unstarted = this.table.takeBuffered().map((l) => l.id);
    // Only what this process holds: a lease under the same worker id that
    // another process holds (one id given to two replicas) is not expired.
    const held = this.table.leftAtStop();
    try {
      // Safe to repeat: a second call finds nothing left to release. Bounded,
      // so a dead or hung database cannot hold a stopping process.
      await retryTransient(() => this.protocol.deregisterWorker(this.deregisterDb, this.s.client.namespace, this.s.options.workerId, unstarted, held), {
        attempts: DEREGISTER_ATTEMPTS,
        signal: AbortSignal.any([this.giveUp.signal, bound]),
        baseMs: 200,
        maxMs: 2000,
      });
    } catch (err) {
      this.emitError(err, 'deregister failed; the leases will expire and be recovered');
    }
  }

  /**
   * The database no longer accepts this lease (a heartbeat left it out, or a
   * claim re-issued the job at a newer execution), or (`expiredMs`) no
   * heartbeat reached it for a whole lease: abort its handler, or drop it if
   * it never started.
   */
  private loseLease(lease: Lease | undefined, what: string, expiredMs?: number, stalledMs?: number): boolean {
    if (!lease || lease.lost) return false;
    lease.lost = true;
    const err = new StaleLeaseError(lease.job.id, lease.job.execution, what, expiredMs, stalledMs);
    // A handler's outcome given up unwritten, as a settlement given up is (a drain that loses one exits 3):
    // a running handler's at once (it is aborted). A settlement already in flight goes on and is
    // often written once the database answers again (nothing took the job meanwhile): it counts
    // only if the fence refuses it (the executor's onExpiredDrop), or if it gives up (the settler counts that).
    if (expiredMs !== undefined && lease.state === 'running') this.expiredOutcomes++;
    if (expiredMs !== undefined && lease.state === 'settling') lease.expiredWhileSettling = true;
    lease.abort.abort(err);
    if (!lease.started) {
      this.table.remove(lease);
      reportStale(this.s.events, this.s.options.workerId, err, lease.job, () => this.jobStatus(lease.job.id), this.s.log);
    }
    return true;
  }

  /** The job's status now, for the line a lost lease logs (undefined when it is gone). */
  private async jobStatus(id: string): Promise<string | undefined> {
    return (await this.protocol.getJob(this.db, this.s.client.namespace, id))?.status;
  }

  /** An `error` event, or one log line when nobody listens (reportError.ts). */
  emitError(err: unknown, what?: string): void {
    reportWorkerError(this.s.events, this.s.options.workerId, err, what);
  }
}
