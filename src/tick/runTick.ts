// runTick: one serverless tick, the design card's shape. It opens at most 2
// connections, registers a worker of kind `tick` with its deadline in the
// same round trip as a recovery pass and the claim of due recurring slots,
// fires those slots, then claims and runs batches (only jobs that fit the
// time left: see sql/007_tick_skips.sql) until the queue is empty or the
// safety margin begins,
// heartbeating all leases on one timer. It aborts stragglers halfway through
// the margin, settles, deregisters (unstarted claims go back to ready with
// no attempt counted), and closes its connections before returning a summary.
// Nothing here runs at module scope and no session state is used, so it
// works through a transaction-mode pooler.
import pg from 'pg';
import { Client } from '../client/client.js';
import { SCHEMA_VERSION } from '../db/schemaVersion.js';
import { countReady } from '../db/protocol.js';
import { tickStart } from '../db/protocol.js';
import { describeDbError, isTransientDbError } from '../db/transient.js';
import { DatabaseUnavailableError, TickDeadlineError } from '../errors.js';
import { fireClaimedSlots } from '../schedules/fireSlots.js';
import { retentionSchedule, SYSTEM_QUEUE, SYSTEM_SCHEDULE_NAMESPACE } from '../schedules/retention.js';
import { toScheduleRow } from '../schedules/scheduleRow.js';
import { addSystemHandlers } from '../schedules/systemHandlers.js';
import { parseConfig } from '../validation.js';
import { defaultWorkerId } from '../worker/options.js';
import { Worker } from '../worker/worker.js';
import { backlogCap, fanoutCount, invokeTicks } from './fanout.js';
import { BACKLOG_METRIC_CAP, tickOptionsSchema, type ResolvedTickOptions, type TickOptions } from './options.js';
import { claimableMs, planTick, type TickPlan } from './plan.js';
import { countSkips, countWorkerEvents, emptySummary, type TickSummary } from './summary.js';

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
  return failFast(tick(options));
}

async function tick(options: TickOptions): Promise<TickSummary> {
  const o = parseConfig(tickOptionsSchema, options, 'tick options');
  const plan = planTick(o);
  const log = o.log ?? ((line: string, err?: unknown) => console.error(line, err ?? ''));
  const withSystem = o.scheduleNamespaces.includes(SYSTEM_SCHEDULE_NAMESPACE);
  const schedules = [
    ...(o.app.schedules ?? []),
    ...(withSystem ? [retentionSchedule({ olderThanMs: o.retentionMs, everyMs: o.retentionEveryMs })] : []),
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
    });
  if (!o.pool) pool.on('error', () => undefined);
  try {
    const client = new Client({ pool, namespace: o.namespace, jobs: o.app.jobs });
    const rows = schedules.map((d) => toScheduleRow(d, (t) => client.definition(t), client.maxPayloadBytes));
    const worker = new Worker(
      client,
      {
        queues: tickQueues(o, withSystem),
        concurrency: o.concurrency,
        heartbeatMs: plan.heartbeatMs,
        workerId: o.workerId ?? `tick:${defaultWorkerId()}`,
        build: o.build,
        listen: false,
        recoverLimit: o.recoverLimit,
      },
      {
        kind: 'tick',
        // Handlers see the instant they are aborted as their deadline.
        deadline: new Date(plan.abortAt),
        maxTimeoutMs: () => claimableMs(plan),
        preRegistered: true,
      },
    );
    o.app.configure(worker);
    if (withSystem) addSystemHandlers(worker, client);
    worker.events.on('error', (err) => log('[workhorse] tick worker error:', err));
    const summary = emptySummary();
    countWorkerEvents(worker, summary);

    const start = await tickStart(pool, o.namespace, {
      workerId: worker.workerId,
      build: o.build,
      queues: worker.options.queues,
      types: worker.types,
      concurrency: o.concurrency,
      heartbeatMs: plan.heartbeatMs,
      deadline: new Date(plan.deadline),
      recoverLimit: o.recoverLimit,
      scheduleNamespaces: o.scheduleNamespaces,
      schedules: rows,
      slotLimit: o.slotLimit,
      slotLeaseMs: SLOT_LEASE_MS,
      expectedVersion: SCHEMA_VERSION,
      windowMs: claimableMs(plan),
      skipScan: SKIP_SCAN,
    });
    summary.recovered = start.recovered;
    countSkips(summary, start.skips, o.skipsByType);
    const abortTimer = setTimeout(() => worker.abortActive(new TickDeadlineError()), Math.max(0, plan.abortAt - Date.now()));
    // Set by the claim loop when it fans out; awaited before the pool closes.
    const pending = { fanout: Promise.resolve() };
    let failed = false;
    try {
      if (start.slots.length > 0) {
        summary.slotsFired = await fireClaimedSlots(pool, o.namespace, start.slots, start.dbNow, o.scheduleCatchupLimit, (e) =>
          log('[workhorse] tick slot error:', e),
        ).catch((err) => {
          log('[workhorse] tick could not fire its slots (their claim lease will expire):', err);
          return 0;
        });
      }
      await claimLoop(o, plan, worker, client, summary, pending, log);
    } catch (err) {
      failed = true;
      throw err;
    } finally {
      clearTimeout(abortTimer);
      // A tick that failed (the database went away) or reached its deadline
      // stops hard: handlers aborted, settlement retries given up, their
      // leases left to the next tick's recovery. It always returns in time.
      const hardTimer = setTimeout(() => void worker.stop({ hard: true }), Math.max(0, plan.deadline - plan.marginMs / 4 - Date.now()));
      await worker.stop({ hard: failed });
      clearTimeout(hardTimer);
      await pending.fanout;
    }
    if (o.reportBacklog) {
      const backlog = await countReady(pool, o.namespace, worker.options.queues, worker.types, null, BACKLOG_METRIC_CAP).catch(
        (err: unknown) => (log('[workhorse] tick could not count its backlog:', err), null),
      );
      if (backlog !== null) o.reportBacklog(backlog);
    }
    summary.msLeft = Math.max(0, plan.deadline - Date.now());
    return summary;
  } finally {
    if (!o.pool) await pool.end();
  }
}

/** A database fault is a DatabaseUnavailableError, at once: a Lambda should not wait for a dead database. */
async function failFast<T>(p: Promise<T>): Promise<T> {
  try {
    return await p;
  } catch (err) {
    if (isTransientDbError(err) && !(err instanceof DatabaseUnavailableError)) {
      throw new DatabaseUnavailableError(`the tick could not reach the database: ${describeDbError(err)}`, { cause: err });
    }
    throw err;
  }
}

/** The app's queues (or the configured ones), plus `sys` for the built-in slots. */
function tickQueues(o: ResolvedTickOptions, withSystem: boolean): string[] {
  const base = o.queues ?? [...new Set(o.app.jobs.map((j) => j.queue))];
  const queues = base.length > 0 ? base : ['default'];
  return withSystem && !queues.includes(SYSTEM_QUEUE) ? [...queues, SYSTEM_QUEUE] : queues;
}

/**
 * Claims and runs batches until the queue is empty (or, with untilEmpty off,
 * until the margin). After the first full batch it decides on fan-out and
 * leaves that promise in `pending` for the caller to await before closing.
 */
async function claimLoop(
  o: ResolvedTickOptions,
  plan: TickPlan,
  worker: Worker,
  client: Client,
  summary: TickSummary,
  pending: { fanout: Promise<void> },
  log: (line: string, err?: unknown) => void,
): Promise<void> {
  let decided = false;
  while (Date.now() < plan.closeAt) {
    const before = summary.claimed;
    const t0 = Date.now();
    const found = await worker.runOnce();
    if (found && !decided) {
      decided = true;
      const batchFull = summary.claimed - before >= o.concurrency;
      if (batchFull) {
        pending.fanout = fanOut(o, plan, worker, client, summary, Date.now() - t0).catch((err: unknown) => {
          log('[workhorse] tick fan-out failed:', err);
        });
      }
    }
    if (!found) {
      if (o.untilEmpty) break;
      await new Promise((r) => setTimeout(r, Math.max(0, Math.min(o.pollMs, plan.closeAt - Date.now()))));
    }
  }
}

async function fanOut(
  o: ResolvedTickOptions,
  plan: TickPlan,
  worker: Worker,
  client: Client,
  summary: TickSummary,
  batchMs: number,
): Promise<void> {
  if (o.maxFanout <= 0 || !o.fanoutFunction || o.generation >= o.maxGeneration) return;
  const now = Date.now();
  const shape = {
    concurrency: o.concurrency,
    batchMs,
    msUntilClose: plan.closeAt - now,
    tickSpanMs: plan.closeAt - plan.startedAt,
    maxFanout: o.maxFanout,
  };
  // Jobs a fresh tick could claim: their timeout fits a whole tick's claiming span.
  const backlog = await countReady(client.pool, client.namespace, worker.options.queues, worker.types, shape.tickSpanMs, backlogCap(shape));
  const count = fanoutCount({ ...shape, backlog });
  if (count === 0) return;
  const r = await invokeTicks({
    functionName: o.fanoutFunction,
    generation: o.generation + 1,
    count,
    lambda: o.lambda,
    endpoint: o.lambdaEndpoint,
  });
  summary.fannedOut += r.accepted;
  if (r.errors.length > 0) throw new AggregateError(r.errors, `${r.errors.length} of ${count} fan-out invocations failed`);
}
