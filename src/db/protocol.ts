// The one thin data-access module: every call into the SQL protocol
// functions of sql/ goes through here, one function per protocol function,
// parameterised, one round trip each. Nothing else in the runtime writes SQL.
import type pg from 'pg';
import { StaleLeaseError } from '../errors.js';
import { integerArrayLiteral, textArrayLiteral } from './arrayLiteral.js';
import {
  toClaimedJob,
  toJobRecord,
  toLeaseRecord,
  toQueueRecord,
  toWorkerRecord,
  type ClaimedJob,
  type JobRecord,
  type JobStatus,
  type LeaseRecord,
  type QueueRecord,
  type WorkerRecord,
} from './rows.js';

/** A pg Pool, PoolClient or Client: anything that runs a query. */
export interface Queryable {
  query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values?: unknown[]): Promise<pg.QueryResult<R>>;
}

/** SQLSTATE raised by raise_stale_v1. */
const STALE_SQLSTATE = 'WH409';

function isStale(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: string }).code === STALE_SQLSTATE;
}

function json(value: unknown): string {
  return JSON.stringify(value === undefined ? null : value);
}

/** A job row as enqueue_many_v1 takes it (snake_case keys, JSON-encoded). */
export interface JobInsert {
  type: string;
  queue: string;
  payload: unknown;
  priority?: number;
  run_at?: string;
  /** Added to the database's now() when run_at is absent. */
  delay_ms?: number;
  max_attempts?: number;
  backoff_kind?: 'exponential' | 'linear' | 'fixed';
  backoff_base_ms?: number;
  backoff_max_ms?: number;
  concurrency_key?: string;
  dedupe_key?: string;
  timeout_ms?: number;
}

export interface WorkerRegistration {
  workerId: string;
  build: string;
  kind: 'process' | 'tick';
  queues: string[];
  types: string[];
  concurrency: number;
  heartbeatMs: number;
  deadline?: Date | null;
}

export interface ClaimRequest {
  workerId: string;
  queues: string[];
  types: string[];
  limit: number;
  leaseMs: number;
  maxTimeoutMs?: number | null;
  /** How many of the claimed jobs (the first, in the order returned) the worker starts at once. */
  start?: number;
}

export interface LeaseRef {
  id: string;
  execution: number;
}

/** A lease as the heartbeat reports it: whether its handler has started. */
export interface HeldLease extends LeaseRef {
  started?: boolean;
}

export interface HeartbeatResult {
  accepted: Set<string>;
  registered: boolean;
  paused: boolean;
  recovered: number;
}

export interface Failure extends LeaseRef {
  error: unknown;
  /** Overrides the job's backoff for this retry. */
  retryDelayMs?: number | null;
  /** Ends the job `failed` now, whatever attempts remain. */
  final?: boolean;
}

export interface FailOutcome {
  id: string;
  status: 'ready' | 'failed';
  runAt: Date;
}

export async function registerWorker(db: Queryable, ns: string, w: WorkerRegistration): Promise<Date> {
  const r = await db.query<{ t: Date }>(
    'select workhorse.register_worker_v1($1, $2, $3, $4, $5, $6, $7, $8, $9) as t',
    [ns, w.workerId, w.build, w.kind, w.queues, w.types, w.concurrency, w.heartbeatMs, w.deadline ?? null],
  );
  return r.rows[0]!.t;
}

export async function deregisterWorker(db: Queryable, ns: string, workerId: string, unstarted: string[]): Promise<number> {
  const r = await db.query<{ n: number }>('select workhorse.deregister_worker_v1($1, $2, $3::bigint[]) as n', [
    ns,
    workerId,
    unstarted,
  ]);
  return r.rows[0]!.n;
}

export async function enqueueMany(
  db: Queryable,
  ns: string,
  jobs: JobInsert[],
): Promise<{ id: string; created: boolean }[]> {
  const r = await db.query<{ id: string; created: boolean }>(
    'select id, created from workhorse.enqueue_many_v1($1, $2::jsonb)',
    [ns, JSON.stringify(jobs)],
  );
  return r.rows.map((x) => ({ id: String(x.id), created: x.created }));
}

/** Anything that can return rows as arrays: a pg Pool, PoolClient or Client. */
export interface ArrayQueryable {
  query<R extends unknown[] = unknown[]>(config: pg.QueryArrayConfig): Promise<pg.QueryArrayResult<R>>;
}

export async function claimMany(db: ArrayQueryable, ns: string, c: ClaimRequest): Promise<ClaimedJob[]> {
  const r = await db.query({
    text: 'select * from workhorse.claim_many_v1($1, $2, $3, $4, $5, $6, $7, $8)',
    values: [ns, c.workerId, c.queues, c.types, c.limit, c.leaseMs, c.maxTimeoutMs ?? null, c.start ?? c.limit],
    rowMode: 'array',
  });
  return r.rows.map(toClaimedJob);
}

export async function heartbeatMany(
  db: Queryable,
  ns: string,
  workerId: string,
  leases: HeldLease[],
  active: number,
  leaseMs: number,
  recoverLimit: number,
): Promise<HeartbeatResult> {
  const r = await db.query<{ accepted: string[]; registered: boolean; paused: boolean; recovered: number }>(
    'select * from workhorse.heartbeat_many_v1($1, $2, $3::bigint[], $4::integer[], $5, $6, $7, $8::boolean[])',
    [
      ns,
      workerId,
      leases.map((l) => l.id),
      leases.map((l) => l.execution),
      active,
      leaseMs,
      recoverLimit,
      leases.map((l) => l.started ?? false),
    ],
  );
  const row = r.rows[0]!;
  return {
    accepted: new Set(row.accepted.map(String)),
    registered: row.registered,
    paused: row.paused,
    recovered: row.recovered,
  };
}

/** A completion: the lease and the handler's result as JSON text (see resultJson). */
export interface Completion extends LeaseRef {
  resultJson: string;
}

/** JSON text of a handler result (undefined is stored as null); throws on values JSON cannot hold. */
export function resultJson(value: unknown): string {
  const text = json(value) as string | undefined; // JSON.stringify gives undefined for a function or symbol
  if (text === undefined) throw new TypeError(`a ${typeof value} is not JSON`);
  return text;
}

/** Returns the ids accepted; the others were refused by the fence. */
export async function completeMany(db: Queryable, ns: string, items: Completion[]): Promise<Set<string>> {
  if (items.length === 0) return new Set();
  const r = await db.query<{ id: string }>(
    'select id from workhorse.complete_many_v1($1, $2::bigint[], $3::integer[], $4::jsonb[]) as id',
    [
      ns,
      integerArrayLiteral(items.map((i) => i.id)),
      integerArrayLiteral(items.map((i) => i.execution)),
      textArrayLiteral(items.map((i) => i.resultJson)),
    ],
  );
  return new Set(r.rows.map((x) => String(x.id)));
}

/** Returns the accepted failures; ids missing were refused by the fence. */
export async function failMany(db: Queryable, ns: string, items: Failure[]): Promise<Map<string, FailOutcome>> {
  if (items.length === 0) return new Map();
  const r = await db.query<{ id: string; status: 'ready' | 'failed'; run_at: Date }>(
    'select * from workhorse.fail_many_v1($1, $2::bigint[], $3::integer[], $4::jsonb[], $5::integer[], $6::boolean[])',
    [
      ns,
      items.map((i) => i.id),
      items.map((i) => i.execution),
      items.map((i) => json(i.error)),
      items.map((i) => (i.retryDelayMs == null ? null : Math.round(i.retryDelayMs))),
      items.map((i) => i.final ?? false),
    ],
  );
  return new Map(r.rows.map((x) => [String(x.id), { id: String(x.id), status: x.status, runAt: x.run_at }]));
}

export async function recoverExpired(db: Queryable, ns: string, limit: number): Promise<number> {
  const r = await db.query<{ n: number }>('select workhorse.recover_expired_v1($1, $2) as n', [ns, limit]);
  return r.rows[0]!.n;
}

async function fenced<T>(lease: LeaseRef, what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isStale(err)) throw new StaleLeaseError(lease.id, lease.execution, what);
    throw err;
  }
}

export async function setProgress(db: Queryable, ns: string, lease: LeaseRef, progress: unknown): Promise<void> {
  await fenced(lease, 'progress', () =>
    db.query('select workhorse.set_progress_v1($1, $2, $3, $4::jsonb)', [ns, lease.id, lease.execution, json(progress)]),
  );
}

export async function recordStep(db: Queryable, ns: string, lease: LeaseRef, name: string, result: unknown): Promise<unknown> {
  return fenced(lease, `step "${name}"`, async () => {
    const r = await db.query<{ result: unknown }>('select workhorse.record_step_v1($1, $2, $3, $4, $5::jsonb) as result', [
      ns,
      lease.id,
      lease.execution,
      name,
      json(result),
    ]);
    return r.rows[0]!.result;
  });
}

/**
 * Inside an open transaction: holds the fence and reads the step's record.
 * Outside one (autocommit) it is a fenced read: refused when stale.
 */
export async function beginTxStep(
  db: Queryable,
  ns: string,
  lease: LeaseRef,
  name: string,
  what = `transactional step "${name}"`,
): Promise<{ recorded: boolean; result: unknown }> {
  return fenced(lease, what, async () => {
    const r = await db.query<{ recorded: boolean; result: unknown }>(
      'select * from workhorse.begin_tx_step_v1($1, $2, $3, $4)',
      [ns, lease.id, lease.execution, name],
    );
    return r.rows[0]!;
  });
}

export async function cancel(db: Queryable, ns: string, jobId: string): Promise<JobStatus | null> {
  const r = await db.query<{ status: JobStatus }>('select status from workhorse.cancel_v1($1, $2)', [ns, jobId]);
  return r.rows[0]?.status ?? null;
}

export async function retry(db: Queryable, ns: string, jobId: string): Promise<JobStatus | null> {
  const r = await db.query<{ status: JobStatus }>('select status from workhorse.retry_v1($1, $2)', [ns, jobId]);
  return r.rows[0]?.status ?? null;
}

export interface QueuePolicyChange {
  paused?: boolean;
  /** null clears the limit. */
  concurrencyLimit?: number | null;
  /** null clears the limit. */
  rateLimit?: number | null;
  ratePeriodMs?: number;
}

export async function setQueue(db: Queryable, ns: string, queue: string, c: QueuePolicyChange): Promise<void> {
  const clearable = (v: number | null | undefined) => (v === undefined ? null : v === null ? -1 : v);
  await db.query('select workhorse.set_queue_v1($1, $2, $3, $4, $5, $6)', [
    ns,
    queue,
    c.paused ?? null,
    clearable(c.concurrencyLimit),
    clearable(c.rateLimit),
    c.ratePeriodMs ?? null,
  ]);
}

export async function setWorkerPaused(db: Queryable, ns: string, workerId: string, paused: boolean): Promise<boolean> {
  const r = await db.query<{ ok: boolean }>('select workhorse.set_worker_paused_v1($1, $2, $3) as ok', [ns, workerId, paused]);
  return r.rows[0]!.ok;
}

export async function getJob(db: Queryable, ns: string, jobId: string): Promise<JobRecord | null> {
  const r = await db.query('select * from workhorse.get_job_v1($1, $2)', [ns, jobId]);
  return r.rows[0] ? toJobRecord(r.rows[0]) : null;
}

export interface JobFilter {
  status?: JobStatus;
  queue?: string;
  type?: string;
  limit: number;
  beforeId?: string;
}

export async function listJobs(db: Queryable, ns: string, f: JobFilter): Promise<JobRecord[]> {
  const r = await db.query('select * from workhorse.list_jobs_v1($1, $2, $3, $4, $5, $6)', [
    ns,
    f.status ?? null,
    f.queue ?? null,
    f.type ?? null,
    f.limit,
    f.beforeId ?? null,
  ]);
  return r.rows.map(toJobRecord);
}

export async function listWorkers(db: Queryable, ns: string): Promise<WorkerRecord[]> {
  const r = await db.query('select * from workhorse.list_workers_v1($1)', [ns]);
  return r.rows.map(toWorkerRecord);
}

export async function listQueues(db: Queryable, ns: string): Promise<QueueRecord[]> {
  const r = await db.query('select * from workhorse.list_queues_v1($1)', [ns]);
  return r.rows.map(toQueueRecord);
}

export async function listLeases(db: Queryable, ns: string): Promise<LeaseRecord[]> {
  const r = await db.query('select * from workhorse.list_leases_v1($1)', [ns]);
  return r.rows.map(toLeaseRecord);
}
