// Worker options, parsed once with zod when the worker is built. Timing
// (heartbeat, lease, dead threshold) is derived in src/timing.ts.
import * as z from 'zod';
import { defaultWorkerId, queueNameSchema, workerIdSchema } from '../names.js';
import { storableText } from '../storable.js';
import { isScheduleDefinition, scheduleNamespaceSchema, type ScheduleDefinition } from '../schedules/defineSchedule.js';
import { refuseNameTwinsIssue } from '../schedules/appSchedules.js';
import { refuseUnfiredSchedules } from '../schedules/firedNamespaces.js';
import { deriveWorkerTiming, MAX_HEARTBEAT_MS } from '../timing.js';
import type { ClaimedJob } from '../db/protocol.js';
import { alertsOptionsSchema, resolveAlertsOptions } from '../alerts/alertsOptions.js';
import { outboxOptionsSchema, outboxSlotConfig } from '../outbox/outboxOptions.js';
import { DEFAULT_RETENTION_EVERY_MS, DEFAULT_RETENTION_MS, retentionEveryMsSchema, retentionMsSchema } from '../schedules/retention.js';
import type { SystemSlotConfig } from '../schedules/systemSchedules.js';
import type { AtMostOne } from '../exclusiveOptions.js';

export type RetryDelay = number | ((attempt: number, job: ClaimedJob) => number | undefined);

/** The longest retry delay the settlement can store (an integer column of milliseconds, about 24.8 days). */
export const MAX_RETRY_DELAY_MS = 2_147_483_647;

/** The longest poll interval a worker takes (a system worker polls at its runner's interval, capped here). */
export const MAX_POLL_MS = 600_000;

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
    /**
     * How long a claim owns a job before the database may recover it. With
     * only leaseMs the heartbeat is a third of it; default four heartbeats.
     */
    leaseMs: z.number().int().min(150).max(4 * 3_600_000).optional(),
    /** How often the one background timer refreshes every lease. Default a third of leaseMs, or 45 s. */
    heartbeatMs: z.number().int().min(50).max(MAX_HEARTBEAT_MS).optional(),
    /** How often the registry row is refreshed and the operator pause read. Default 5 s (or the heartbeat, if shorter). */
    registryIntervalMs: z.number().int().min(20).max(3_600_000).optional(),
    /**
     * At most 186 characters: the worker's schedule runner and system
     * worker register as `<workerId>:schedules` and `<workerId>:schedules:sys`,
     * within the registry's 200.
     */
    workerId: workerIdSchema
      .refine((id) => id.length <= 186, 'workerId is at most 186 characters (its schedule runner registers as <workerId>:schedules:sys, within 200)')
      .optional(),
    /** Build id of this deployment, stored in the registry. */
    build: storableText(z.string().max(200)).default('unversioned'),
    /** Safety poll under the wake hints. */
    pollMs: z.number().int().min(10).max(MAX_POLL_MS).default(1000),
    /** Without an active listener, empty polls back off up to this. Default 5 s (at least pollMs). */
    maxPollMs: z.number().int().min(10).max(600_000).optional(),
    /** LISTEN for wake hints on a dedicated connection (turn off behind transaction poolers). */
    listen: z.boolean().default(true),
    /** A claim a wake hint triggers waits a random 0..staggerMs first when other workers share the queues. */
    staggerMs: z.number().int().min(0).max(10_000).default(10),
    /** Expired leases one heartbeat's recovery pass returns at most. */
    recoverLimit: z.number().int().min(0).max(100_000).default(100),
    /**
     * Opts this worker into offering recurring slots: while it runs, it fires
     * the due slots of these schedule namespaces (`sys` = the built-in sys.*
     * slots, run on the `sys` queue). Any number of workers may opt in; each
     * cadence fires once whichever claims it.
     */
    scheduleNamespaces: z.array(scheduleNamespaceSchema).min(1).optional(),
    /** With scheduleNamespaces: at most this many missed cadences of one slot fire at once (the most recent). Default 1. */
    scheduleCatchupLimit: z.number().int().min(1).max(1000).optional(),
    /**
     * With scheduleNamespaces: schedules this worker stores at start and
     * declares, as a tick does its app's (`schedules: app.schedules`): once no
     * running worker or tick declares one, it stops firing.
     */
    schedules: z.array(z.custom<ScheduleDefinition>(isScheduleDefinition, 'a schedule must be a defineSchedule() value')).optional(),
    /** With the `sys` schedule namespace: sys.retention deletes terminal jobs older than this (as a tick's retentionMs). */
    retentionMs: retentionMsSchema.optional(),
    /** With the `sys` schedule namespace: sys.retention's cadence (as a tick's retentionEveryMs). */
    retentionEveryMs: retentionEveryMsSchema.optional(),
    /** With the `sys` schedule namespace: deliver the outbox to these sinks (sys.outbox, and right after each commit); `{ lifecycle: [] }` alone turns job lifecycle events off. */
    outbox: outboxOptionsSchema.optional(),
    /** With the `sys` schedule namespace: evaluate the alert rules (sys.alerts). */
    alerts: alertsOptionsSchema.optional(),
    /** Overrides the persisted retry policy: ms, or a function (undefined defers to the database). */
    retryDelayMs: z
      .union([z.number().int().min(0).max(MAX_RETRY_DELAY_MS), z.custom<(attempt: number, job: ClaimedJob) => number | undefined>((v) => typeof v === 'function')])
      .optional(),
  })
  .strict()
  .refine((o) => o.queue === undefined || o.queues === undefined, {
    message: 'give queue or queues, not both (queue is shorthand for queues: [queue])',
    path: ['queue'],
  })
  .refine((o) => o.heartbeatMs === undefined || o.leaseMs === undefined || o.heartbeatMs < o.leaseMs, {
    message: 'heartbeatMs must be shorter than leaseMs: every lease is refreshed once per heartbeat',
    path: ['heartbeatMs'],
  })
  .refine((o) => o.maxPollMs === undefined || o.maxPollMs >= o.pollMs, {
    message: 'maxPollMs must be at least pollMs',
    path: ['maxPollMs'],
  })
  .refine((o) => o.scheduleCatchupLimit === undefined || o.scheduleNamespaces !== undefined, {
    message: 'scheduleCatchupLimit applies to the slots a worker fires: give scheduleNamespaces too',
    path: ['scheduleCatchupLimit'],
  })
  .refine((o) => o.outbox === undefined || (o.scheduleNamespaces ?? []).includes('sys'), {
    message: 'outbox is delivered by the sys slots: add "sys" to scheduleNamespaces',
    path: ['outbox'],
  })
  .refine((o) => (o.retentionMs === undefined && o.retentionEveryMs === undefined) || (o.scheduleNamespaces ?? []).includes('sys'), {
    message: 'sys.retention is run by the sys slots: add "sys" to scheduleNamespaces',
    path: ['retentionMs'],
  })
  .refine((o) => o.alerts === undefined || (o.scheduleNamespaces ?? []).includes('sys'), {
    message: 'alerts are evaluated by the sys slots: add "sys" to scheduleNamespaces',
    path: ['alerts'],
  })
  .superRefine((o, ctx) => {
    refuseUnfiredSchedules(o.schedules, o.scheduleNamespaces, 'worker', ctx);
    refuseNameTwinsIssue(o.schedules, ctx);
  });

/** Listener-less idle polls back off up to this unless maxPollMs says otherwise. */
export const DEFAULT_MAX_POLL_MS = 5_000;
/** The registry row is refreshed this often unless registryIntervalMs (or a shorter heartbeat) says otherwise. */
export const DEFAULT_REGISTRY_INTERVAL_MS = 5_000;

/** A Worker's options: `queue` or `queues`, not both (the type says so as the check does). */
export type WorkerOptions = AtMostOne<z.input<typeof workerOptionsSchema>, 'queue', 'queues'>;

export interface ResolvedWorkerOptions {
  queues: string[];
  concurrency: number;
  prefetch: number;
  heartbeatMs: number;
  leaseMs: number;
  registryIntervalMs: number;
  workerId: string;
  build: string;
  pollMs: number;
  maxPollMs: number;
  listen: boolean;
  staggerMs: number;
  recoverLimit: number;
  retryDelayMs: RetryDelay | undefined;
  scheduleNamespaces: string[] | undefined;
  scheduleCatchupLimit: number;
  /** The schedules it stores and declares at start (with scheduleNamespaces). */
  schedules: ScheduleDefinition[];
  /** sys.retention's settings (stored with the `sys` schedule namespace). */
  retention: { olderThanMs: number; everyMs: number };
  /** sys.outbox and sys.alerts configuration (used with the `sys` schedule namespace). */
  system: SystemSlotConfig;
}

export function resolveWorkerOptions(o: z.output<typeof workerOptionsSchema>): ResolvedWorkerOptions {
  const timing = deriveWorkerTiming(o);
  return {
    // A queue named twice is claimed from once (each claim walked it twice).
    queues: [...new Set(o.queues ?? [o.queue ?? 'default'])],
    concurrency: o.concurrency,
    prefetch: o.prefetch,
    heartbeatMs: timing.heartbeatMs,
    leaseMs: timing.leaseMs,
    registryIntervalMs: o.registryIntervalMs ?? Math.min(DEFAULT_REGISTRY_INTERVAL_MS, timing.heartbeatMs),
    workerId: o.workerId ?? defaultWorkerId(),
    build: o.build,
    pollMs: o.pollMs,
    maxPollMs: o.maxPollMs ?? Math.max(o.pollMs, DEFAULT_MAX_POLL_MS),
    listen: o.listen,
    staggerMs: o.staggerMs,
    recoverLimit: o.recoverLimit,
    retryDelayMs: o.retryDelayMs,
    scheduleNamespaces: o.scheduleNamespaces,
    scheduleCatchupLimit: o.scheduleCatchupLimit ?? 1,
    schedules: o.schedules ?? [],
    retention: { olderThanMs: o.retentionMs ?? DEFAULT_RETENTION_MS, everyMs: o.retentionEveryMs ?? DEFAULT_RETENTION_EVERY_MS },
    system: { ...outboxSlotConfig(o.outbox), alerts: o.alerts ? resolveAlertsOptions(o.alerts) : undefined },
  };
}
