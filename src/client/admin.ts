// Operator actions and fleet views: what a dashboard or the HTTP API calls.
// Every method is one protocol call in the client's namespace.
import * as z from 'zod';
import { NotFoundError } from '../errors.js';
import {
  JOB_STATUSES,
  type JobRecord,
  type JobStatus,
  type LeaseRecord,
  type Protocol,
  type Queryable,
  type QueueRecord,
  type WorkerRecord,
} from '../db/protocol.js';
import { jobIdStringSchema, jobTypeSchema, queueNameSchema, workerIdSchema } from '../names.js';
import { parseInput } from '../validation.js';

const recoverLimitSchema = z.number().int().min(0).max(100_000);

const listJobsSchema = z
  .object({
    status: z.enum(JOB_STATUSES as [JobStatus, ...JobStatus[]]).optional(),
    queue: queueNameSchema.optional(),
    type: jobTypeSchema.optional(),
    limit: z.number().int().min(1).max(1000).default(100),
    /** Keyset cursor: the last id of the previous page; null (a page's `nextCursor` before the first page) means the first page. */
    cursor: jobIdStringSchema.nullish(),
  })
  .strict();

const limitsSchema = z
  .object({
    concurrencyLimit: z.number().int().min(0).max(1_000_000).nullable().optional(),
    rateLimit: z.number().int().min(1).max(1_000_000).nullable().optional(),
    /** The rate limit's period; it is not a limit, so null (like undefined) leaves it as it is. */
    ratePeriodMs: z.number().int().min(1).max(86_400_000).nullable().optional(),
  })
  .strict();

export type ListJobsFilter = z.input<typeof listJobsSchema>;
export type QueueLimits = z.input<typeof limitsSchema>;

export interface JobPage {
  jobs: JobRecord[];
  /** Pass as `cursor` for the next page; null on the last page. */
  nextCursor: string | null;
}

export class Admin {
  constructor(
    private readonly protocol: Protocol,
    private readonly db: Queryable,
    private readonly ns: string,
  ) {}

  listWorkers(): Promise<WorkerRecord[]> {
    return this.protocol.listWorkers(this.db, this.ns);
  }

  async listJobs(filter: ListJobsFilter = {}): Promise<JobPage> {
    const f = parseInput(listJobsSchema, filter, 'job filter');
    // One row more than the page: whether it exists says whether an older page does.
    const rows = await this.protocol.listJobs(this.db, this.ns, {
      status: f.status as JobRecord['status'] | undefined,
      queue: f.queue,
      type: f.type,
      limit: f.limit + 1,
      beforeId: f.cursor ?? undefined,
    });
    const jobs = rows.slice(0, f.limit);
    return { jobs, nextCursor: rows.length > f.limit ? jobs[jobs.length - 1]!.id : null };
  }

  listQueues(): Promise<QueueRecord[]> {
    return this.protocol.listQueues(this.db, this.ns);
  }

  listLeases(): Promise<LeaseRecord[]> {
    return this.protocol.listLeases(this.db, this.ns);
  }

  /** Durable pause: no worker claims from the queue until resumed. */
  async pauseQueue(queue: string): Promise<void> {
    await this.protocol.setQueue(this.db, this.ns, parseInput(queueNameSchema, queue, 'queue name'), { paused: true });
  }

  async resumeQueue(queue: string): Promise<void> {
    await this.protocol.setQueue(this.db, this.ns, parseInput(queueNameSchema, queue, 'queue name'), { paused: false });
  }

  /** Fleet-wide limits for one queue; `null` clears a limit. */
  async setQueueLimits(queue: string, limits: QueueLimits): Promise<void> {
    const name = parseInput(queueNameSchema, queue, 'queue name');
    const l = parseInput(limitsSchema, limits, 'queue limits');
    await this.protocol.setQueue(this.db, this.ns, name, l);
  }

  /**
   * Stores an operator pause in the worker's registry row. The worker picks
   * it up on its next heartbeat; it dies with that worker incarnation.
   */
  async setWorkerPaused(workerId: string, paused: boolean): Promise<void> {
    const id = parseInput(workerIdSchema, workerId, 'worker id');
    const ok = await this.protocol.setWorkerPaused(this.db, this.ns, id, parseInput(z.boolean(), paused, 'paused'));
    if (!ok) throw new NotFoundError(`worker "${id}" is not registered in namespace "${this.ns}"`);
  }

  /** Runs one bounded recovery pass now (workers also run it on every heartbeat). */
  async recoverExpired(limit = 100): Promise<number> {
    // The same bound as the worker's recoverLimit; checked here, not by the database.
    return this.protocol.recoverExpired(this.db, this.ns, parseInput(recoverLimitSchema, limit, 'recovery limit'));
  }
}
