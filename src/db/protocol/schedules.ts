// sql/protocol/schedules.sql: recurring slots. Cron math lives in the
// caller (schedules/cadence.ts); firing is claim_slots_v2 then fire_slots_v1.
import type { Queryable } from '../queryable.js';

/** A schedule row as upsert_schedules_v1 takes it. */
export interface ScheduleRow {
  name: string;
  schedule_namespace: string;
  cron: string | null;
  timezone: string | null;
  interval_ms: number | null;
  /** The enqueue_many_v1 row each cadence inserts (without dedupe_key). */
  job: Record<string, unknown>;
  /** Applied only when present. */
  enabled?: boolean;
  /** First cadence for a new or re-timed slot; interval slots default to now + interval. */
  first_run_at?: string;
  /** Stored by a declarative sync (an app's start): fires only from firers that declare it. */
  declared?: boolean;
}

/** A due slot, leased to the caller. */
export interface ClaimedSlot {
  name: string;
  cron: string | null;
  timezone: string | null;
  intervalMs: number | null;
  nextRunAt: Date;
}

export interface SlotFire {
  name: string;
  /** The next_run_at the claim returned: the fence. */
  expected: Date;
  nextRunAt: Date;
  /** ISO times, oldest first. */
  cadences: string[];
}

export interface FiredCadence {
  name: string;
  cadence: string;
  jobId: string;
  created: boolean;
}

/** The job a schedule enqueues each cadence, as enqueue's options name its fields (absent: the job type's defaults). */
export interface ScheduledJob {
  type: string;
  queue: string;
  payload: unknown;
  priority?: number;
  maxAttempts?: number;
  backoff?: { kind?: string; baseMs?: number; maxMs?: number };
  concurrencyKey?: string;
  timeoutMs?: number;
}

export interface ScheduleRecord {
  name: string;
  scheduleNamespace: string;
  cron: string | null;
  timezone: string | null;
  intervalMs: number | null;
  job: ScheduledJob;
  enabled: boolean;
  /**
   * Stored by an app's declarative sync (a tick's or a ScheduleRunner's
   * start): fires only from firers whose build declares it. false for a slot
   * stored by `schedules.define()`, which any firer of its namespace fires.
   */
  declared: boolean;
  nextRunAt: Date;
  lastFiredAt: Date | null;
  lastCadence: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
export function toClaimedSlot(r: any): ClaimedSlot {
  return {
    name: r.name,
    cron: r.cron ?? null,
    timezone: r.timezone ?? null,
    intervalMs: r.interval_ms == null ? null : Number(r.interval_ms),
    nextRunAt: new Date(r.next_run_at),
  };
}

/** The stored enqueue row (enqueue_many_v1's snake_case fields) in the API's names. */
function toScheduledJob(j: any): ScheduledJob {
  const out: ScheduledJob = { type: j.type, queue: j.queue, payload: j.payload };
  if (j.priority != null) out.priority = j.priority;
  if (j.max_attempts != null) out.maxAttempts = j.max_attempts;
  if (j.backoff_kind != null || j.backoff_base_ms != null || j.backoff_max_ms != null) {
    out.backoff = {
      ...(j.backoff_kind != null ? { kind: j.backoff_kind } : {}),
      ...(j.backoff_base_ms != null ? { baseMs: j.backoff_base_ms } : {}),
      ...(j.backoff_max_ms != null ? { maxMs: j.backoff_max_ms } : {}),
    };
  }
  if (j.concurrency_key != null) out.concurrencyKey = j.concurrency_key;
  if (j.timeout_ms != null) out.timeoutMs = j.timeout_ms;
  return out;
}

function toScheduleRecord(r: any): ScheduleRecord {
  return {
    name: r.name,
    scheduleNamespace: r.schedule_namespace,
    cron: r.cron,
    timezone: r.timezone,
    intervalMs: r.interval_ms == null ? null : Number(r.interval_ms),
    job: toScheduledJob(r.job),
    enabled: r.enabled,
    declared: r.declared,
    nextRunAt: r.next_run_at,
    lastFiredAt: r.last_fired_at,
    lastCadence: r.last_cadence,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}
/* eslint-enable @typescript-eslint/no-explicit-any */


/** The database's clock: a cron slot's first run is the first cadence after it, whatever the storing machine's clock says. */
export async function databaseNow(db: Queryable): Promise<Date> {
  const r = await db.query<{ now: Date }>('select now() as now');
  return r.rows[0]!.now;
}

export async function claimSlots(
  db: Queryable,
  ns: string,
  workerId: string,
  scheduleNamespaces: string[],
  /** The slots the caller's build declares (declared slots not among them are left alone); null: every slot. */
  declared: string[] | null,
  limit: number,
  leaseMs: number,
): Promise<{ dbNow: Date | null; slots: ClaimedSlot[] }> {
  const r = await db.query('select * from workhorse.claim_slots_v2($1, $2, $3, $4, $5, $6)', [
    ns,
    workerId,
    scheduleNamespaces,
    declared,
    limit,
    leaseMs,
  ]);
  return { dbNow: (r.rows[0]?.db_now as Date | undefined) ?? null, slots: r.rows.map(toClaimedSlot) };
}

export async function fireSlots(db: Queryable, ns: string, fires: SlotFire[]): Promise<FiredCadence[]> {
  if (fires.length === 0) return [];
  const payload = fires.map((f) => ({
    name: f.name,
    expected: f.expected.toISOString(),
    next_run_at: f.nextRunAt.toISOString(),
    cadences: f.cadences,
  }));
  const r = await db.query<{ name: string; cadence: string; job_id: string; created: boolean }>(
    'select * from workhorse.fire_slots_v1($1, $2::jsonb)',
    [ns, JSON.stringify(payload)],
  );
  return r.rows.map((x) => ({ name: x.name, cadence: x.cadence, jobId: String(x.job_id), created: x.created }));
}

/** Returns how many rows were inserted or changed. */
export async function upsertSchedules(db: Queryable, ns: string, rows: ScheduleRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const r = await db.query<{ n: number }>('select workhorse.upsert_schedules_v1($1, $2::jsonb) as n', [ns, JSON.stringify(rows)]);
  return r.rows[0]!.n;
}

export async function listSchedules(db: Queryable, ns: string): Promise<ScheduleRecord[]> {
  const r = await db.query('select * from workhorse.list_schedules_v1($1)', [ns]);
  return r.rows.map(toScheduleRecord);
}

export async function getSchedule(db: Queryable, ns: string, name: string): Promise<ScheduleRecord | null> {
  const r = await db.query('select * from workhorse.get_schedule_v1($1, $2)', [ns, name]);
  return r.rows[0] ? toScheduleRecord(r.rows[0]) : null;
}

export async function setScheduleEnabled(
  db: Queryable,
  ns: string,
  name: string,
  enabled: boolean,
  nextRunAt: Date | null,
): Promise<boolean> {
  const r = await db.query<{ ok: boolean }>('select workhorse.set_schedule_enabled_v1($1, $2, $3, $4) as ok', [
    ns,
    name,
    enabled,
    nextRunAt,
  ]);
  return r.rows[0]!.ok;
}

export async function deleteSchedule(db: Queryable, ns: string, name: string): Promise<boolean> {
  const r = await db.query<{ ok: boolean }>('select workhorse.delete_schedule_v1($1, $2) as ok', [ns, name]);
  return r.rows[0]!.ok;
}
