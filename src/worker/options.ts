// Worker options, parsed once with zod when the worker is built.
import * as z from 'zod';
import { defaultWorkerId, queueNameSchema, workerIdSchema } from '../names.js';
import { scheduleNamespaceSchema } from '../schedules/defineSchedule.js';
import { DEFAULT_HEARTBEAT_MS } from '../timing.js';
import type { ClaimedJob } from '../db/protocol.js';

export type RetryDelay = number | ((attempt: number, job: ClaimedJob) => number | undefined);

export const workerOptionsSchema = z
  .object({
    /** Queues this worker claims from, rotated so none starves. */
    queues: z.array(queueNameSchema).min(1).optional(),
    /** Shorthand for one queue. */
    queue: queueNameSchema.optional(),
    /** Simultaneous handlers in this worker. */
    concurrency: z.number().int().min(1).max(10_000).default(10),
    /** Extra jobs claimed ahead of free slots (a local buffer). Unstarted ones go back on stop. */
    prefetch: z.number().int().min(0).max(10_000).default(0),
    /** The one timing knob: lease = 4 heartbeats, dead = 7. */
    heartbeatMs: z.number().int().min(50).max(3_600_000).default(DEFAULT_HEARTBEAT_MS),
    workerId: workerIdSchema.optional(),
    /** Build id of this deployment, stored in the registry. */
    build: z.string().max(200).default('unversioned'),
    /** Safety poll under the LISTEN wake hints. */
    pollMs: z.number().int().min(10).max(600_000).default(1000),
    /** LISTEN for wake hints on a dedicated connection (turn off behind transaction poolers). */
    listen: z.boolean().default(true),
    /** Expired leases one heartbeat's recovery pass returns at most. */
    recoverLimit: z.number().int().min(0).max(100_000).default(100),
    /**
     * Opts this worker into offering recurring slots: while it runs, it fires
     * the due slots of these schedule namespaces (`sys` = the built-in sys.*
     * slots, run on the `sys` queue). Any number of workers may opt in; each
     * cadence fires once whichever claims it.
     */
    scheduleNamespaces: z.array(scheduleNamespaceSchema).min(1).optional(),
    /** At most this many missed cadences of one slot fire at once (the most recent). */
    scheduleCatchupLimit: z.number().int().min(1).max(1000).default(1),
    /** Overrides the persisted retry policy: ms, or a function (undefined defers to the database). */
    retryDelayMs: z
      .union([z.number().int().min(0), z.custom<(attempt: number, job: ClaimedJob) => number | undefined>((v) => typeof v === 'function')])
      .optional(),
  })
  .strict();

export type WorkerOptions = z.input<typeof workerOptionsSchema>;

export interface ResolvedWorkerOptions {
  queues: string[];
  concurrency: number;
  prefetch: number;
  heartbeatMs: number;
  workerId: string;
  build: string;
  pollMs: number;
  listen: boolean;
  recoverLimit: number;
  retryDelayMs: RetryDelay | undefined;
  scheduleNamespaces: string[] | undefined;
  scheduleCatchupLimit: number;
}

export function resolveWorkerOptions(o: z.output<typeof workerOptionsSchema>): ResolvedWorkerOptions {
  return {
    queues: o.queues ?? [o.queue ?? 'default'],
    concurrency: o.concurrency,
    prefetch: o.prefetch,
    heartbeatMs: o.heartbeatMs,
    workerId: o.workerId ?? defaultWorkerId(),
    build: o.build,
    pollMs: o.pollMs,
    listen: o.listen,
    recoverLimit: o.recoverLimit,
    retryDelayMs: o.retryDelayMs,
    scheduleNamespaces: o.scheduleNamespaces,
    scheduleCatchupLimit: o.scheduleCatchupLimit,
  };
}
