// sql/protocol/reads.sql: what operators and dashboards look at, mapped
// from snake_case rows to the camelCase records the public API speaks. Job
// ids are bigints in the database and strings in JavaScript.
import type { Queryable } from '../queryable.js';
import { mapped } from '../sqlState.js';
import type { WaitRecord } from './waits.js';

export type JobStatus = 'ready' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = ['ready', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];

/**
 * A job's last error as stored. Workhorse writes `{ name, message, code?,
 * stack? }` for a handler's error and `{ name: 'LeaseExpired', message,
 * attempt, worker }` when recovery ends an attempt; a client in another
 * language may store other fields, so each is optional.
 */
export interface JobError {
  name?: string;
  message?: string;
  code?: string;
  stack?: string;
  [field: string]: unknown;
}

export interface JobRecord {
  id: string;
  namespace: string;
  queue: string;
  type: string;
  payload: unknown;
  status: JobStatus;
  priority: number;
  runAt: Date;
  attempt: number;
  maxAttempts: number;
  backoff: { kind: 'exponential' | 'linear' | 'fixed'; baseMs: number; maxMs: number };
  concurrencyKey: string | null;
  dedupeKey: string | null;
  timeoutMs: number | null;
  execution: number;
  result: unknown;
  lastError: JobError | null;
  progress: unknown;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** The worker of the job's last (or current) execution, or null before the first. */
  lastWorker: string | null;
  /** A waiting job's open wait (what it waits for, since when; the newest of several), when the read asked for it (client.getJob). */
  wait?: WaitRecord | null;
  /** Every open wait of a waiting job, newest first (several when it waits on a Promise.race or Promise.all of waits). */
  waits?: WaitRecord[];
}

/* eslint-disable @typescript-eslint/no-explicit-any */
export function toJobRecord(r: any): JobRecord {
  return {
    id: String(r.id),
    namespace: r.namespace,
    queue: r.queue,
    type: r.type,
    payload: r.payload,
    status: r.status,
    priority: r.priority,
    runAt: r.run_at,
    attempt: r.attempt,
    maxAttempts: r.max_attempts,
    backoff: { kind: r.backoff_kind, baseMs: r.backoff_base_ms, maxMs: r.backoff_max_ms },
    concurrencyKey: r.concurrency_key,
    dedupeKey: r.dedupe_key,
    timeoutMs: r.timeout_ms,
    execution: Number(r.execution),
    result: r.result,
    lastError: r.last_error,
    progress: r.progress,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    lastWorker: r.last_worker ?? null,
  };
}

export interface WorkerRecord {
  namespace: string;
  id: string;
  build: string;
  kind: 'process' | 'tick';
  queues: string[];
  types: string[];
  concurrency: number;
  active: number;
  heartbeatMs: number;
  deadline: Date | null;
  state: 'active' | 'draining' | 'dead';
  operatorPaused: boolean;
  startedAt: Date;
  lastSeen: Date;
}

export function toWorkerRecord(r: any): WorkerRecord {
  return {
    namespace: r.namespace,
    id: r.id,
    build: r.build,
    kind: r.kind,
    queues: r.queues,
    types: r.types,
    concurrency: r.concurrency,
    active: r.active,
    heartbeatMs: r.heartbeat_ms,
    deadline: r.deadline,
    state: r.state,
    operatorPaused: r.operator_paused,
    startedAt: r.started_at,
    lastSeen: r.last_seen,
  };
}

export interface QueueRecord {
  name: string;
  paused: boolean;
  concurrencyLimit: number | null;
  rateLimit: number | null;
  ratePeriodMs: number;
  ready: number;
  running: number;
  waiting: number;
}

export function toQueueRecord(r: any): QueueRecord {
  return {
    name: r.name,
    paused: r.paused,
    concurrencyLimit: r.concurrency_limit,
    rateLimit: r.rate_limit,
    ratePeriodMs: r.rate_period_ms,
    ready: Number(r.ready ?? 0),
    running: Number(r.running ?? 0),
    waiting: Number(r.waiting ?? 0),
  };
}

export interface LeaseRecord {
  jobId: string;
  workerId: string;
  execution: number;
  expiresAt: Date;
  expiresInMs: number;
}

export function toLeaseRecord(r: any): LeaseRecord {
  return {
    jobId: String(r.job_id),
    workerId: r.worker_id,
    execution: Number(r.execution),
    expiresAt: r.expires_at,
    expiresInMs: Number(r.expires_in_ms),
  };
}

export interface JobFilter {
  status?: JobStatus;
  queue?: string;
  type?: string;
  limit: number;
  beforeId?: string;
}

export function getJob(db: Queryable, ns: string, jobId: string): Promise<JobRecord | null> {
  return mapped({}, async () => {
    const r = await db.query('select * from workhorse.get_job_v1($1, $2)', [ns, jobId]);
    return r.rows[0] ? toJobRecord(r.rows[0]) : null;
  });
}

/** Newest first; `beforeId` is the last id of the previous page. */
export function listJobs(db: Queryable, ns: string, f: JobFilter): Promise<JobRecord[]> {
  return mapped({}, async () => {
    const r = await db.query('select * from workhorse.list_jobs_v1($1, $2, $3, $4, $5, $6)', [
      ns,
      f.status ?? null,
      f.queue ?? null,
      f.type ?? null,
      f.limit,
      f.beforeId ?? null,
    ]);
    return r.rows.map(toJobRecord);
  });
}

export function listWorkers(db: Queryable, ns: string): Promise<WorkerRecord[]> {
  return mapped({}, async () => (await db.query('select * from workhorse.list_workers_v1($1)', [ns])).rows.map(toWorkerRecord));
}

export function listQueues(db: Queryable, ns: string): Promise<QueueRecord[]> {
  return mapped({}, async () => (await db.query('select * from workhorse.list_queues_v1($1)', [ns])).rows.map(toQueueRecord));
}

export function listLeases(db: Queryable, ns: string): Promise<LeaseRecord[]> {
  return mapped({}, async () => (await db.query('select * from workhorse.list_leases_v1($1)', [ns])).rows.map(toLeaseRecord));
}
