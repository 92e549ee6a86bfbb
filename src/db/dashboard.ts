// The dashboard's reads: one function per protocol function of
// sql/protocol/dashboard.sql, parameterised, one round trip each, mapped to
// camelCase records. Read-only; the dashboard's actions go through the
// client and its admin API like every other caller's.
import type { JobStatus, WaitKind } from './protocol.js';
import type { Queryable } from './queryable.js';

/** One row of the namespace table: the job without payload, result or progress, with its lease. */
export interface DashboardJobRow {
  id: string;
  queue: string;
  type: string;
  status: JobStatus;
  priority: number;
  runAt: Date;
  /** run_at against the database clock: positive while the job is scheduled for later. */
  dueInMs: number;
  attempt: number;
  maxAttempts: number;
  execution: number;
  concurrencyKey: string | null;
  dedupeKey: string | null;
  createdAt: Date;
  finishedAt: Date | null;
  /** The first 200 characters of last_error.message. */
  errorMessage: string | null;
  leasedBy: string | null;
  leaseExpiresInMs: number | null;
  leaseStarted: boolean | null;
  /** The worker whose expired lease the recovery pass last took this job from. */
  recoveredFrom: string | null;
  /** The other job holding the gate of this job's concurrency key right now. */
  gateHeldBy: string | null;
  /** A waiting job's open wait: what it waits for (null for any other job). */
  wait: DashboardWait | null;
}

/** What a waiting job of the table waits for. */
export interface DashboardWait {
  kind: WaitKind;
  name: string;
  key: string | null;
  /** Its wake time or timeout against the database clock; null when it has none. */
  wakeInMs: number | null;
  /** How many other open waits the job has beside this one (waits opened together). */
  others: number;
}

export interface DashboardJobPage {
  jobs: DashboardJobRow[];
  /** The cursor of the next (older) page; null when nothing older exists. */
  nextBeforeId: string | null;
  /** For pages of every job or of succeeded ones: the lowest id the page's window searched. */
  searchedDownTo: string | null;
  /** The database clock when the page was read. */
  asOf: Date;
}

export interface DashboardJobFilter {
  status?: JobStatus;
  queue?: string;
  type?: string;
  limit: number;
  beforeId?: string;
  /** Most ids one page of every job (or of succeeded ones) searches below its cursor. */
  span: number;
}

/* eslint-disable @typescript-eslint/no-explicit-any */
const num = (v: any): number => Number(v);
const numOrNull = (v: any): number | null => (v === null || v === undefined ? null : Number(v));
const dateOrNull = (v: any): Date | null => (v === null || v === undefined ? null : new Date(v));

function toJobRow(r: any): DashboardJobRow {
  return {
    id: String(r.id),
    queue: r.queue,
    type: r.type,
    status: r.status,
    priority: r.priority,
    runAt: new Date(r.run_at),
    dueInMs: num(r.due_in_ms),
    attempt: r.attempt,
    maxAttempts: r.max_attempts,
    execution: r.execution,
    concurrencyKey: r.concurrency_key,
    dedupeKey: r.dedupe_key,
    createdAt: new Date(r.created_at),
    finishedAt: dateOrNull(r.finished_at),
    errorMessage: r.error_message,
    leasedBy: r.leased_by,
    leaseExpiresInMs: numOrNull(r.lease_expires_in_ms),
    leaseStarted: r.lease_started,
    recoveredFrom: r.recovered_from,
    gateHeldBy: r.gate_held_by,
    wait: r.wait_kind ? { kind: r.wait_kind, name: r.wait_name, key: r.wait_key, wakeInMs: numOrNull(r.wait_wake_in_ms), others: Number(r.wait_others ?? 0) } : null,
  };
}

export async function dashboardJobs(db: Queryable, ns: string, f: DashboardJobFilter): Promise<DashboardJobPage> {
  const r = await db.query('select * from workhorse.dashboard_jobs_v1($1, $2, $3, $4, $5, $6, $7)', [
    ns,
    f.status ?? null,
    f.queue ?? null,
    f.type ?? null,
    f.limit,
    f.beforeId ?? null,
    f.span,
  ]);
  const row = r.rows[0]!;
  return {
    jobs: (row.jobs as any[]).map(toJobRow),
    nextBeforeId: row.next_before_id === null ? null : String(row.next_before_id),
    searchedDownTo: row.searched_down_to === null ? null : String(row.searched_down_to),
    asOf: row.as_of,
  };
}

export interface JobLease {
  workerId: string;
  execution: number;
  claimedAt: Date;
  expiresAt: Date;
  expiresInMs: number;
  started: boolean;
}

export async function jobLease(db: Queryable, ns: string, jobId: string): Promise<JobLease | null> {
  const r = await db.query('select * from workhorse.dashboard_job_lease_v1($1, $2)', [ns, jobId]);
  const x = r.rows[0];
  if (!x) return null;
  return { workerId: x.worker_id, execution: Number(x.execution), claimedAt: x.claimed_at, expiresAt: x.expires_at, expiresInMs: num(x.expires_in_ms), started: x.started };
}

export type AttemptOutcome = 'succeeded' | 'failed' | 'retried' | 'recovered' | 'orphaned' | 'cancelled' | 'released';

export interface AttemptRecord {
  execution: number;
  attempt: number;
  workerId: string | null;
  outcome: AttemptOutcome;
  error: unknown;
  startedAt: Date | null;
  finishedAt: Date;
  durationMs: number | null;
}

export async function jobAttempts(db: Queryable, ns: string, jobId: string): Promise<AttemptRecord[]> {
  const r = await db.query('select * from workhorse.dashboard_job_attempts_v1($1, $2)', [ns, jobId]);
  return r.rows.map((x: any) => ({
    execution: Number(x.execution),
    attempt: x.attempt,
    workerId: x.worker_id,
    outcome: x.outcome,
    error: x.error,
    startedAt: x.started_at,
    finishedAt: x.finished_at,
    durationMs: numOrNull(x.duration_ms),
  }));
}

export interface StepRecord {
  name: string;
  result: unknown;
  execution: number;
  createdAt: Date;
}

export async function jobSteps(db: Queryable, ns: string, jobId: string): Promise<StepRecord[]> {
  const r = await db.query('select * from workhorse.dashboard_job_steps_v1($1, $2)', [ns, jobId]);
  return r.rows.map((x: any) => ({ name: x.name, result: x.result, execution: Number(x.execution), createdAt: x.created_at }));
}

/** The parent of a job, or one of its children. */
export interface FamilyMember {
  /** The name the child was spawned under (for the parent: this job's name). */
  name: string;
  jobId: string;
  type: string;
  status: JobStatus;
  /** A detached child is not cancelled with its parent. */
  detached: boolean;
}

export interface JobFamily {
  parent: FamilyMember | null;
  children: FamilyMember[];
}

export async function jobFamily(db: Queryable, ns: string, jobId: string, limit: number): Promise<JobFamily> {
  const r = await db.query('select * from workhorse.dashboard_job_family_v1($1, $2, $3)', [ns, jobId, limit]);
  const member = (x: any): FamilyMember => ({ name: x.name, jobId: String(x.job_id), type: x.type, status: x.status, detached: x.detached });
  return {
    parent: r.rows.filter((x: any) => x.relation === 'parent').map(member)[0] ?? null,
    children: r.rows.filter((x: any) => x.relation === 'child').map(member),
  };
}

export interface QueueDepth {
  queue: string;
  /** Ready and due now. */
  due: number;
  /** Ready, but scheduled for later. */
  scheduled: number;
  /** How long the oldest due job has been due; null when none is. */
  oldestDueMs: number | null;
  failed: number;
  cancelled: number;
}

export async function queueDepth(db: Queryable, ns: string): Promise<QueueDepth[]> {
  const r = await db.query('select * from workhorse.dashboard_queue_depth_v1($1)', [ns]);
  return r.rows.map((x: any) => ({
    queue: x.queue,
    due: num(x.due),
    scheduled: num(x.scheduled),
    oldestDueMs: numOrNull(x.oldest_due_ms),
    failed: num(x.failed),
    cancelled: num(x.cancelled),
  }));
}

export interface ThroughputPoint {
  queue: string;
  /** The start of the minute. */
  minute: Date;
  outcome: AttemptOutcome;
  attempts: number;
}

export async function throughput(db: Queryable, ns: string, minutes: number): Promise<ThroughputPoint[]> {
  const r = await db.query('select * from workhorse.dashboard_throughput_v1($1, $2)', [ns, minutes]);
  return r.rows.map((x: any) => ({ queue: x.queue, minute: x.minute, outcome: x.outcome, attempts: num(x.attempts) }));
}

export interface BacklogPoint {
  queue: string;
  /** The end of the minute (the last point is the database's now). */
  at: Date;
  /** Jobs created by then and not finished by then. */
  outstanding: number;
}

export async function backlog(db: Queryable, ns: string, minutes: number): Promise<BacklogPoint[]> {
  const r = await db.query('select * from workhorse.dashboard_backlog_v1($1, $2)', [ns, minutes]);
  return r.rows.map((x: any) => ({ queue: x.queue, at: x.at, outstanding: num(x.outstanding) }));
}

export interface WorkerAge {
  id: string;
  heartbeatAgeMs: number;
  /** Leases the worker holds in the lease table. */
  leases: number;
}

/** Whether a slot's work runs (dashboard_slot_run_v1): its last cadence's job, and the oldest of its jobs due and not running. */
export interface SlotRun {
  last: { jobId: string; status: string; finishedAt: Date | null } | null;
  oldestDue: { jobId: string; runAt: Date } | null;
}

export async function slotRun(db: Queryable, ns: string, name: string): Promise<SlotRun | null> {
  const r = await db.query('select * from workhorse.dashboard_slot_run_v1($1, $2)', [ns, name]);
  const x = r.rows[0];
  if (!x) return null;
  return {
    last: x.job_id === null ? null : { jobId: String(x.job_id), status: x.status, finishedAt: x.finished_at ?? null },
    oldestDue: x.oldest_due_id === null ? null : { jobId: String(x.oldest_due_id), runAt: x.oldest_due_at },
  };
}

export async function workerAges(db: Queryable, ns: string): Promise<WorkerAge[]> {
  const r = await db.query('select * from workhorse.dashboard_worker_ages_v1($1)', [ns]);
  return r.rows.map((x: any) => ({ id: x.id, heartbeatAgeMs: num(x.heartbeat_age_ms), leases: num(x.leases) }));
}
/* eslint-enable @typescript-eslint/no-explicit-any */
