// The tick's options, parsed once with zod. Defaults suit a Lambda
// invocation: a 5 s heartbeat (lease 20 s), a 1 s safety margin, stop as soon
// as the queue is empty, run the `default` and `sys` schedule namespaces, no
// fan-out unless a maximum and a function name are configured.
import type { LambdaClient } from '@aws-sdk/client-lambda';
import type pg from 'pg';
import * as z from 'zod';
import { appProblem, type WorkhorseApp } from '../app/defineApp.js';
import { connectionStringSchema } from '../db/connectionString.js';
import { lambdaFunctionNameSchema, namespaceSchema, queueNameSchema, workerIdSchema } from '../names.js';
import { dateProblem, storableText } from '../storable.js';
import { scheduleNamespaceSchema } from '../schedules/defineSchedule.js';
import { DEFAULT_RETENTION_EVERY_MS, DEFAULT_RETENTION_MS, retentionEveryMsSchema, retentionMsSchema } from '../schedules/retention.js';
import { isPgPool } from '../db/pgShape.js';

export const DEFAULT_TICK_HEARTBEAT_MS = 5000;
export const DEFAULT_SAFETY_MARGIN_MS = 1000;
/**
 * Below this a safety margin may leave too little time, after aborting the
 * handlers still running, to write their outcomes and deregister: the
 * least margin a tick that fits its own margin to its budget (POST /tick) gives.
 */
export const TIGHT_MARGIN_MS = 250;
/** The ready-backlog metric counts at most this many jobs. */
export const BACKLOG_METRIC_CAP = 100_000;


const fn = <T>(what: string) => z.custom<T>((v) => typeof v === 'function', `${what} must be a function`);

/** The tick's options field by field (createTickHandler checks its own against these); tickOptionsSchema adds the database rule. */
export const tickOptionsShape = z
  .object({
    /** The user's app: job definitions, handlers, schedules. */
    app: z.custom<WorkhorseApp>().superRefine((v, ctx) => {
      const problem = appProblem(v);
      if (problem) ctx.addIssue({ code: 'custom', message: problem });
    }),
    /** The database (DATABASE_URL). The tick opens at most 2 connections and closes them before returning. */
    connectionString: connectionStringSchema.optional(),
    /** Or a pool the caller owns (and closes); the tick uses at most 2 of its connections at once. */
    pool: z.custom<pg.Pool>(isPgPool, 'pool must be a pg.Pool').optional(),
    namespace: namespaceSchema.default('default'),
    /** When the tick must have returned (Lambda: now + getRemainingTimeInMillis()). */
    deadline: z.date({ error: (iss) => dateProblem(iss.input) }),
    /**
     * Heartbeat of the tick's leases; when set it must be shorter than the
     * tick's time limit. Default 5 s, or a quarter of a shorter time limit.
     */
    heartbeatMs: z.number().int().min(50).max(3_600_000).optional(),
    /**
     * The last part of the time limit kept back: claims stop when it begins,
     * handlers still running halfway through it are aborted, the rest is for
     * settling, deregistering and closing connections.
     */
    safetyMarginMs: z.number().int().min(0).max(900_000).default(DEFAULT_SAFETY_MARGIN_MS),
    concurrency: z.number().int().min(1).max(1000).default(10),
    /** Queues to claim from; default: every queue of the app's job definitions. */
    queues: z.array(queueNameSchema).min(1).optional(),
    /** Report the skipped jobs (summary.skippedTimeout) per job type too, as summary.skippedByType. */
    skipsByType: z.boolean().default(false),
    /** The default of the app's `alerts.emitMetrics` (EMF lines for CloudWatch): on when the tick runs on Lambda. */
    alertMetrics: z.boolean().default(false),
    /** Return as soon as a claim finds nothing (true), or keep polling until the margin. */
    untilEmpty: z.boolean().default(true),
    /** Wait between empty claims when untilEmpty is false. */
    pollMs: z.number().int().min(10).max(60_000).default(500),
    workerId: workerIdSchema.optional(),
    build: storableText(z.string().max(200)).default('unversioned'),
    /** Expired leases the start's recovery pass returns at most. */
    recoverLimit: z.number().int().min(0).max(100_000).default(100),
    /**
     * Schedule namespaces whose due slots this tick fires (`sys` = the built-in
     * slots). Unset: `default`, `sys` and the namespace of every schedule of
     * the app (firedNamespaces.ts), so an app's slots fire wherever it runs.
     */
    scheduleNamespaces: z.array(scheduleNamespaceSchema).optional(),
    /** At most this many missed cadences of one slot fire at once (the most recent). */
    scheduleCatchupLimit: z.number().int().min(1).max(1000).default(1),
    /** Slots one tick leases at most. */
    slotLimit: z.number().int().min(0).max(1000).default(100),
    /** sys.retention: terminal jobs older than this are deleted. */
    retentionMs: retentionMsSchema.default(DEFAULT_RETENTION_MS),
    /** sys.retention's cadence. */
    retentionEveryMs: retentionEveryMsSchema.default(DEFAULT_RETENTION_EVERY_MS),
    /** Fan-out generation of this tick: 0 for a scheduled one, n + 1 for one a tick of generation n invoked. */
    generation: z.number().int().min(0).max(1000).default(0),
    /** Further ticks one tick may invoke; 0 disables fan-out. */
    maxFanout: z.number().int().min(0).max(100).default(0),
    /** Ticks of this generation or later never fan out. */
    maxGeneration: z.number().int().min(0).max(100).default(3),
    /** The Lambda function fan-out invokes (on Lambda: this function). */
    fanoutFunction: lambdaFunctionNameSchema('fanoutFunction').optional(),
    /** A LambdaClient to invoke with (else one is built, with lambdaEndpoint when set). */
    lambda: z.custom<LambdaClient>((v) => typeof v === 'object' && v !== null && 'send' in v, 'lambda must be a LambdaClient').optional(),
    lambdaEndpoint: z.string().url().optional(),
    /**
     * Called once per tick, after deregistering, with the ready backlog of the
     * tick's queues (capped at BACKLOG_METRIC_CAP) and the namespace the tick
     * worked in: one more round trip. The Lambda handler uses it to publish
     * the Workhorse/ReadyBacklog metric.
     */
    reportBacklog: fn<(readyBacklog: number, namespace: string) => void>('reportBacklog').optional(),
    /** Where the tick reports errors it survives (default console.error). */
    log: fn<(line: string, err?: unknown) => void>('log').optional(),
    /**
     * Stops the tick early (a process told to stop): no more claims, running
     * handlers may finish until the tick's abort instant as at its deadline,
     * outcomes are written and the tick deregisters, then it returns its
     * summary.
     */
    signal: z.custom<AbortSignal>((v) => v instanceof AbortSignal, 'signal must be an AbortSignal').optional(),
  })
  .strict();

export const tickOptionsSchema = tickOptionsShape.superRefine((o, ctx) => {
    // An empty string is not missing: the string's own schema says it is empty.
    if (o.connectionString === undefined && !o.pool) {
      ctx.addIssue({
        code: 'custom',
        path: ['connectionString'],
        message: 'a database is required: set DATABASE_URL (or DATABASE_URL_SECRET_ARN on Lambda), or pass connectionString or pool',
      });
    }
    if (o.connectionString && o.pool) {
      ctx.addIssue({ code: 'custom', path: ['pool'], message: 'give connectionString or pool, not both' });
    }
  });

export type TickOptions = z.input<typeof tickOptionsSchema>;
export type ResolvedTickOptions = z.output<typeof tickOptionsSchema>;
