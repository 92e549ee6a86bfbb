// sql/protocol/tick.sql: the tick's merged start call (schema check,
// registration, schedule sync, a bounded recovery pass, the lease of due
// recurring slots and the count of due jobs the tick will leave because
// they cannot finish in its time, in one round trip), and the backlog count
// its fan-out decision and backlog metric read.
import { SchemaVersionError } from '../../errors.js';
import { readSchemaVersion } from '../schemaCheck.js';
import type { Queryable } from '../queryable.js';
import { mapDbError, sqlStateOf, SQLSTATE } from '../sqlState.js';
import { toClaimedSlot, type ClaimedSlot, type ScheduleRow } from './schedules.js';

export interface TickStart {
  workerId: string;
  build: string;
  queues: string[];
  types: string[];
  concurrency: number;
  heartbeatMs: number;
  deadline: Date;
  recoverLimit: number;
  scheduleNamespaces: string[];
  schedules: ScheduleRow[];
  slotLimit: number;
  slotLeaseMs: number;
  expectedVersion: number;
  /** The tick's claim window: skips are counted against it. */
  windowMs: number;
  /** Due jobs examined at most when counting skips. */
  skipScan: number;
}

/** Due jobs of one type the tick leaves because they cannot finish in its window. */
export interface TickSkip {
  type: string;
  /** Their timeoutMs is longer than the window. */
  tooLong: number;
  /** No timeoutMs, and a tick's deadline already cut off a run at least as long as the window. */
  cutOff: number;
  /** The longest such timeout or cut-off run, in ms. */
  longestMs: number;
}

export interface TickStartResult {
  /** The database clock at the start: cadences are computed against it. */
  dbNow: Date;
  recovered: number;
  slots: ClaimedSlot[];
  skips: TickSkip[];
}

interface SkipRow {
  type: string;
  too_long: number;
  cut_off: number;
  longest_ms: number;
}

export async function tickStart(db: Queryable, ns: string, t: TickStart): Promise<TickStartResult> {
  try {
    const r = await db.query<{ db_now: Date; recovered: number; slots: unknown[]; skips: SkipRow[] }>(
      'select * from workhorse.tick_start_v2($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14, $15, $16)',
      [
        ns,
        t.workerId,
        t.build,
        t.queues,
        t.types,
        t.concurrency,
        t.heartbeatMs,
        t.deadline,
        t.recoverLimit,
        t.scheduleNamespaces,
        JSON.stringify(t.schedules),
        t.slotLimit,
        t.slotLeaseMs,
        t.expectedVersion,
        t.windowMs,
        t.skipScan,
      ],
    );
    const row = r.rows[0]!;
    return {
      dbNow: row.db_now,
      recovered: row.recovered,
      slots: row.slots.map(toClaimedSlot),
      skips: row.skips.map((k) => ({ type: k.type, tooLong: k.too_long, cutOff: k.cut_off, longestMs: k.longest_ms })),
    };
  } catch (err) {
    // A schema older than tick_start_v2 has no such function: say which version it is. At this
    // code's version a function is missing (dropped by hand): PostgreSQL's error stands, which
    // the CLI and the logs follow with the fix (`workhorse migrate` reinstalls it).
    if (sqlStateOf(err) === SQLSTATE.undefinedFunction) {
      const found = await readSchemaVersion(db).catch(() => undefined);
      if (found !== undefined && found !== t.expectedVersion) throw new SchemaVersionError(found, t.expectedVersion, { cause: err });
    }
    throw mapDbError(err, { expectedVersion: t.expectedVersion });
  }
}

export async function countReady(
  db: Queryable,
  ns: string,
  queues: string[],
  types: string[],
  maxTimeoutMs: number | null,
  cap: number,
): Promise<number> {
  const r = await db.query<{ n: number }>('select workhorse.count_ready_v1($1, $2, $3, $4, $5) as n', [
    ns,
    queues,
    types,
    maxTimeoutMs,
    cap,
  ]);
  return r.rows[0]!.n;
}
