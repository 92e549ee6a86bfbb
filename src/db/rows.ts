// The shapes the protocol functions return, mapped from snake_case rows to
// the camelCase records the public API speaks. Job ids are bigints in the
// database and strings in JavaScript.

export type JobStatus = 'ready' | 'running' | 'waiting' | 'succeeded' | 'failed' | 'cancelled';
export const JOB_STATUSES: readonly JobStatus[] = ['ready', 'running', 'waiting', 'succeeded', 'failed', 'cancelled'];

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
  lastError: unknown;
  progress: unknown;
  createdAt: Date;
  updatedAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
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
    execution: r.execution,
    result: r.result,
    lastError: r.last_error,
    progress: r.progress,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

/** A job as a claim hands it to a worker. */
export interface ClaimedJob {
  id: string;
  queue: string;
  type: string;
  payload: unknown;
  priority: number;
  runAt: Date;
  attempt: number;
  maxAttempts: number;
  execution: number;
  timeoutMs: number | null;
  concurrencyKey: string | null;
  progress: unknown;
  createdAt: Date;
  leaseExpiresAt: Date;
}

/**
 * A claim_many_v1 row, fetched as an array (no per-row keyed object on the
 * hot path), in the column order of the workhorse.claimed_job type.
 */
export function toClaimedJob(r: unknown[]): ClaimedJob {
  return {
    id: String(r[0]),
    queue: r[1] as string,
    type: r[2] as string,
    payload: r[3],
    priority: r[4] as number,
    runAt: new Date(r[5] as number),
    attempt: r[6] as number,
    maxAttempts: r[7] as number,
    execution: r[8] as number,
    timeoutMs: r[9] as number | null,
    concurrencyKey: r[10] as string | null,
    progress: r[11],
    createdAt: new Date(r[12] as number),
    leaseExpiresAt: new Date(r[13] as number),
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
    execution: r.execution,
    expiresAt: r.expires_at,
    expiresInMs: Number(r.expires_in_ms),
  };
}
