// runTick: one serverless tick, the design card's shape. It opens at most 2
// connections, registers a worker of kind `tick` with its deadline in the
// same round trip as a recovery pass and the claim of due recurring slots,
// fires those slots, then runs the tick pass (tickPass.ts: claims and runs
// batches of the jobs that fit the time left until the queue is empty or the
// safety margin begins, heartbeating all leases on one timer). It aborts stragglers halfway through
// the margin, settles, deregisters (unstarted claims go back to ready with
// no attempt counted), and closes its connections before returning a summary.
// Nothing here runs at module scope and no session state is used, so it
// works through a transaction-mode pooler.
import { context, trace, type Attributes, type Span } from '@opentelemetry/api';
import pg from 'pg';
import { prepareConnection } from '../db/connectionSetup.js';
import { destroyPoolSockets } from '../db/poolEnd.js';
import { appQueues } from '../app/appQueues.js';
import { Client } from '../client/client.js';
import { SCHEMA_VERSION } from '../db/schemaVersion.js';
import { describeDbError, isTransientDbError } from '../db/transient.js';
import { operatorHint } from '../db/operatorFixable.js';
import { DatabaseUnavailableError, WorkhorseError } from '../errors.js';
import { fireClaimedSlots } from '../schedules/fireSlots.js';
import { tickScheduleNamespaces } from '../schedules/firedNamespaces.js';
import { parseAlertsOptions } from '../alerts/alertsOptions.js';
import { outboxSlotConfig, parseOutboxOptions } from '../outbox/outboxOptions.js';
import { deliverBeforeReturn } from './tickOutbox.js';
import { SYSTEM_QUEUE, SYSTEM_SCHEDULE_NAMESPACE } from '../schedules/retention.js';
import { systemSchedules, type SystemSlotConfig } from '../schedules/systemSchedules.js';
import { toScheduleRow } from '../schedules/scheduleRow.js';
import { flushTelemetry } from '../telemetry/telemetryBacklog.js';
import { getTracer, meters, SpanKind, SpanStatusCode, tracingOn } from '../telemetry/telemetry.js';
import { parseConfig } from '../validation.js';
import { defaultWorkerId } from '../names.js';
import { settledWithin } from '../boundedWait.js';
import { addSystemHandlers } from '../worker/systemHandlers.js';
import { refuseHandlersOutsideApp } from '../app/handlersOutsideApp.js';
import { configureWorker } from '../worker/configureWorker.js';
import { WorkerBase } from '../worker/workerBase.js';
import { BACKLOG_METRIC_CAP, TIGHT_MARGIN_MS, tickOptionsSchema, type ResolvedTickOptions, type TickOptions } from './options.js';
import { claimableMs, planTick } from './plan.js';
import { countSkips, countWorkerEvents, emptySummary, type TickSummary } from './summary.js';
import { loadLambdaSdk, mayFanOut } from './fanout.js';
import { TickErrors } from './tickErrors.js';
import { defaultTickLog } from './tickLog.js';
import { TickPass } from './tickPass.js';
import { pause } from '../db/retryTransient.js';
import { LINGER_GRACE_MS } from '../worker/invokeHandler.js';

/** application_name of the tick's connections (visible in pg_stat_activity). */
export const TICK_APPLICATION_NAME = 'workhorse-tick';
/** How long a tick holds the slots it claimed before another claimer may take them. */
const SLOT_LEASE_MS = 30_000;
/** The longest a tick waits for a connection. */
const TICK_CONNECT_TIMEOUT_MS = 5_000;
/** Due jobs the start examines at most when counting what the tick will skip. */
const SKIP_SCAN = 1000;

/**
 * Runs one tick. A database fault (unreachable at the start, or lost on the
 * way) rejects with DatabaseUnavailableError at once: whatever the tick had
 * leased is recovered by the next one.
 */
export function runTick(options: TickOptions): Promise<TickSummary> {
  return tracingOn() ? tracedTick(options) : untracedTick(options);
}

function recordTimeLeft(summary: TickSummary): TickSummary {
  flushTelemetry();
  quietly(() => meters().tickTimeLeft.record(summary.msLeft));
  return summary;
}

/**
 * The tick inside a `workhorse.tick` span carrying its summary. The
 * application's tracer runs apart from the tick: a span processor or sampler
 * that throws costs the span, never the tick or its summary.
 */
function tracedTick(options: TickOptions): Promise<TickSummary> {
  let span: Span;
  try {
    span = getTracer().startSpan('workhorse.tick', { kind: SpanKind.INTERNAL });
  } catch {
    return untracedTick(options);
  }
  return context.with(trace.setSpan(context.active(), span), () => untracedTick(options)).then(
    (summary) => {
      quietly(() => span.setAttributes(tickAttributes(summary)));
      quietly(() => span.end());
      return summary;
    },
    (err: unknown) => {
      quietly(() => {
        span.recordException(err instanceof Error ? err : String(err));
        span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      });
      quietly(() => span.end());
      throw err;
    },
  );
}

function untracedTick(options: TickOptions): Promise<TickSummary> {
  return failFast(tick(options)).then(recordTimeLeft);
}

function tickAttributes(summary: TickSummary): Attributes {
  return {
    'workhorse.tick.claimed': summary.claimed,
    'workhorse.tick.succeeded': summary.succeeded,
    'workhorse.tick.failed': summary.failed,
    'workhorse.tick.retried': summary.retried,
    'workhorse.tick.suspended': summary.suspended,
    'workhorse.tick.lost': summary.lost,
    'workhorse.tick.recovered': summary.recovered,
    'workhorse.tick.skipped_timeout': summary.skippedTimeout,
    'workhorse.tick.fanned_out': summary.fannedOut,
    'workhorse.tick.slots_fired': summary.slotsFired,
    'workhorse.tick.ms_left': summary.msLeft,
  };
}

/** Runs an SDK call whose failure is the application's tracer's, not the tick's. */
function quietly(f: () => void): void {
  try {
    f();
  } catch {
    // a span processor of the application's threw
  }
}

async function tick(options: TickOptions): Promise<TickSummary> {
  const o = parseConfig(tickOptionsSchema, options, 'tick options');
  const plan = planTick(o);
  // Told to stop before it began (a process's stop signal came first): nothing is registered, recovered or fired.
  if (o.signal?.aborted) return { ...emptySummary(), msLeft: Math.max(0, plan.deadline - Date.now()) };
  const log = o.log ?? defaultTickLog;
  const scheduleNamespaces = o.scheduleNamespaces ?? tickScheduleNamespaces(o.app.schedules);
  const withSystem = scheduleNamespaces.includes(SYSTEM_SCHEDULE_NAMESPACE);
  const system: SystemSlotConfig = {
    ...outboxSlotConfig(o.app.outbox ? parseOutboxOptions(o.app.outbox, 'app outbox options') : undefined),
    alerts: o.app.alerts ? parseAlertsOptions(o.app.alerts, 'app alerts options', o.alertMetrics) : undefined,
  };
  const schedules = [
    ...(o.app.schedules ?? []),
    ...(withSystem ? systemSchedules({ olderThanMs: o.retentionMs, everyMs: o.retentionEveryMs }, system) : []),
  ];

  const pool =
    o.pool ??
    new pg.Pool({
      connectionString: o.connectionString,
      max: 2,
      application_name: TICK_APPLICATION_NAME,
      // A tick does not wait for a dead database: it fails fast and the next tick tries again.
      connectionTimeoutMillis: Math.max(500, Math.min(TICK_CONNECT_TIMEOUT_MS, Math.floor(plan.budgetMs / 4))),
      keepAlive: true,
      onConnect: prepareConnection,
    });
  if (!o.pool) pool.on('error', () => undefined);
  const callsEndBy = plan.deadline - Math.floor(plan.marginMs / 8);
  try {
    const client = new Client({ pool, namespace: o.namespace, jobs: o.app.jobs });
    // Declared: of the declared slots, a tick fires only those its app (and sys config) declares.
    const rows = schedules.map((d) => ({ ...toScheduleRow(d, (t) => client.definition(t), client.maxPayloadBytes), declared: true }));
    const queues = tickQueues(o, withSystem);
    // The app binds its handlers to a worker, as everywhere; the tick pass
    // runs them (a WorkerBase: a tick has no long-lived loop to start).
    const worker = new WorkerBase(client, {
      queues,
      concurrency: o.concurrency,
      heartbeatMs: plan.heartbeatMs,
      workerId: o.workerId ?? `tick:${defaultWorkerId()}`,
      build: o.build,
      listen: false,
      recoverLimit: o.recoverLimit,
    });
    configureWorker((w: WorkerBase) => o.app.configure(w), worker, 'app');
    refuseHandlersOutsideApp(o.app, worker.types);
    if (withSystem) addSystemHandlers(worker.handlers, client, system);
    const errors = new TickErrors(log);
    worker.events.on('error', errors.error);
    const summary = emptySummary();
    countWorkerEvents(worker, summary);
    // Every database call of the tick ends by callsEndBy: a server that hangs
    // mid-tick (stopped, partitioned) cannot hold it past its deadline.
    const pass = new TickPass(client, worker, { startedAt: plan.startedAt, claimUntil: plan.closeAt, abortAt: plan.abortAt, callsEndBy }, o, summary, log);
    const db = pass.core.boundedDb;

    let failed = false;
    let failure: unknown;
    try {
      // Loaded before any handler runs (fanout.ts): loading it mid-tick blocked the heartbeats and settlements.
      if (mayFanOut(o)) await loadLambdaSdk().catch(() => undefined);
      const start = await pass.core.registerWith(() =>
        client.protocol.tickStart(db, o.namespace, {
          workerId: worker.workerId,
          build: o.build,
          queues,
          types: worker.types,
          concurrency: o.concurrency,
          heartbeatMs: plan.heartbeatMs,
          deadline: new Date(plan.deadline),
          recoverLimit: o.recoverLimit,
          scheduleNamespaces,
          schedules: rows,
          slotLimit: o.slotLimit,
          slotLeaseMs: SLOT_LEASE_MS,
          expectedVersion: SCHEMA_VERSION,
          windowMs: claimableMs(plan),
          skipScan: SKIP_SCAN,
        }),
      );
      summary.recovered = start.recovered;
      const lifecycle = withSystem ? system.lifecycle : undefined;
      if (lifecycle) await client.protocol.setOutboxLifecycle(db, o.namespace, lifecycle);
      countSkips(summary, start.skips, o.skipsByType);
      if (start.slots.length > 0) {
        summary.slotsFired = await fireClaimedSlots(client.protocol, db, o.namespace, start.slots, start.dbNow, o.scheduleCatchupLimit, (e) =>
          log('[workhorse] tick slot error:', e),
        ).catch((err) => {
          log('[workhorse] tick could not fire its slots (their claim lease will expire):', err);
          return 0;
        });
      }
      await pass.run();
    } catch (err) {
      failed = true;
      failure = err;
      throw err;
    } finally {
      // A tick that failed (the database went away) or reached its deadline
      // stops hard: handlers aborted, settlement retries given up, their
      // leases left to the next tick's recovery. It always returns in time.
      const hardTimer = setTimeout(() => void pass.stop(true), Math.max(0, plan.deadline - plan.marginMs / 4 - Date.now()));
      await pass.stop(failed, failed ? failure : undefined);
      clearTimeout(hardTimer);
      await pass.fanout;
      // A handler that ignored its abort is reported LINGER_GRACE_MS after it: waited for, when the deadline
      // leaves room, so the line is in this invocation's log (a Lambda freezes the process once it returns).
      if (pass.core.lingeringHandlers > 0) await pause(Math.min(LINGER_GRACE_MS + 20, Math.max(0, callsEndBy - Date.now())));
      errors.flush();
    }
    // The database stopped answering while handlers ran (a hung server), or
    // the safety margin left too little time after the abort to write the
    // aborted jobs' outcomes: those are left to recovery, and the tick fails
    // rather than report a summary of work it could not record.
    const unsettled = pass.core.table.unsettledCount;
    if (unsettled > 0) {
      // A refusal that ended the claiming (grants revoked, never given back within the tick) is why: said with
      // what to do, as the claim fault it is (it read "the database did not answer in time").
      const refusal = pass.claimFault;
      const hint = refusal === undefined ? undefined : operatorHint(refusal);
      const why =
        refusal !== undefined
          ? `the database refused the tick's work: ${describeDbError(refusal)}${hint ? `; ${hint}` : ''}`
          : `the database did not answer in time${plan.marginMs < TIGHT_MARGIN_MS ? `, or the safety margin of ${plan.marginMs} ms left too little time to write it` : ''}`;
      throw new DatabaseUnavailableError(
        `the tick could not write the outcome of ${unsettled} job${unsettled === 1 ? '' : 's'} by its deadline (${why}): their leases expire and recovery returns them`,
        refusal === undefined ? undefined : { cause: refusal },
      );
    }
    // A claim the database did not take ended the pass early: the handlers it had were let finish; the tick fails.
    if (pass.claimFault !== undefined) throw pass.claimFault;
    // A tick told to stop leaves delivery to the next tick or the cadence.
    if (withSystem && system.outbox && !o.signal?.aborted) await deliverBeforeReturn(client, db, system.outbox, worker.workerId, plan.closeAt, log, o.signal);
    if (o.reportBacklog) {
      const backlog = await client.protocol.countReady(db, o.namespace, queues, worker.types, null, BACKLOG_METRIC_CAP).catch(
        (err: unknown) => (log('[workhorse] tick could not count its backlog:', err), null),
      );
      if (backlog !== null) o.reportBacklog(backlog, o.namespace);
    }
    // The start's recovery pass and every heartbeat's (a beat returns expired leases too).
    summary.recovered += pass.core.recoveredByBeats;
    summary.msLeft = Math.max(0, plan.deadline - Date.now());
    return summary;
  } finally {
    // The tick does not wait for its pool past callsEndBy (it waited until
    // the deadline itself, and returned after it); then it destroys what is
    // left (connection attempts to a hung server included), which otherwise
    // kept `workhorse tick` alive for their connect timeout.
    if (!o.pool && !(await settledWithin(pool.end(), Math.max(0, callsEndBy - Date.now())))) destroyPoolSockets(pool);
  }
}

/** A database fault is a DatabaseUnavailableError, at once: a Lambda should not wait for a dead database. */
async function failFast<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (isTransientDbError(err) && !(err instanceof DatabaseUnavailableError)) {
      // An error with a SQLSTATE came from the server (read-only, shutting down, too many clients): it was reached.
      const code = (err as { code?: unknown }).code;
      const reached = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
      const what = reached ? 'the database refused the tick\'s work' : 'the tick could not reach the database';
      throw new DatabaseUnavailableError(`${what}: ${describeDbError(err)}`, { cause: err });
    }
    // A refusal an operator ends (grants revoked, a workhorse function dropped): the next tick tries again
    // too, and the error says what to do (it was PostgreSQL's own, with no hint).
    const hint = err instanceof WorkhorseError ? undefined : operatorHint(err);
    if (hint !== undefined) throw new DatabaseUnavailableError(`the database refused the tick's work: ${describeDbError(err)}; ${hint}`, { cause: err });
    throw err;
  }
}

/** The app's queues (appQueues.ts: its jobs' and its schedules'), or the configured ones plus `sys` for the built-in slots. */
function tickQueues(o: ResolvedTickOptions, withSystem: boolean): string[] {
  const served = appQueues(o.app, false);
  const queues = o.queues ?? (served.length > 0 ? served : ['default']);
  return withSystem && !queues.includes(SYSTEM_QUEUE) ? [...queues, SYSTEM_QUEUE] : queues;
}
