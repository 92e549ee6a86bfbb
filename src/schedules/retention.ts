// sys.retention, the first built-in recurring slot. Each cadence enqueues a
// `sys.retention` job on the `sys` queue; its handler deletes terminal jobs
// older than the retention (with their attempts and steps ledgers) and the
// registry rows of dead workers, in bounded batches, each its own short
// statement so no transaction stays open long. Ready, running and waiting
// jobs are never touched.
import * as z from 'zod';
import type { Client } from '../client/client.js';
import { defineJob } from '../client/defineJob.js';
import { parseInput } from '../validation.js';
import { SYSTEM_QUEUE } from '../names.js';
import { defineSystemSchedule, type ScheduleDefinition } from './defineSchedule.js';

export const SYS_RETENTION = 'sys.retention';
export { SYSTEM_QUEUE };
/** The schedule namespace of the built-in slots. */
export const SYSTEM_SCHEDULE_NAMESPACE = 'sys';

export const DEFAULT_RETENTION_MS = 7 * 86_400_000;
export const DEFAULT_RETENTION_EVERY_MS = 3_600_000;
/**
 * The longest retention (100 years). retention_v1 subtracts it from now(),
 * and PostgreSQL's timestamps end about 6,700 years back: a longer one
 * (a "keep forever" of 1e15 ms) failed every run with "timestamp out of
 * range", so nothing was ever deleted.
 */
export const MAX_RETENTION_MS = 3_155_760_000_000;
/** The longest cadence of sys.retention: a slot's interval is at most 366 days. */
export const MAX_RETENTION_EVERY_MS = 366 * 86_400_000;
/** retentionMs and retentionEveryMs as the tick and the worker take them. */
export const retentionMsSchema = z.number().int().min(1000).max(MAX_RETENTION_MS, 'retention is at most 100 years (3155760000000 ms)');
export const retentionEveryMsSchema = z.number().int().min(1000).max(MAX_RETENTION_EVERY_MS);

export const retentionPayloadSchema = z
  .object({
    /** Terminal jobs that finished longer ago than this are deleted. */
    olderThanMs: retentionMsSchema,
    /** Rows one statement deletes at most. */
    batchSize: z.number().int().min(1).max(100_000).default(1000),
    /** Batches one run performs at most; the next cadence continues. */
    maxBatches: z.number().int().min(1).max(100_000).default(100),
  })
  .strict();

export type RetentionPayload = z.input<typeof retentionPayloadSchema>;

export const retentionJob = defineJob({
  type: SYS_RETENTION,
  schema: retentionPayloadSchema,
  queue: SYSTEM_QUEUE,
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 60_000, maxMs: 60_000 } },
});

export interface RetentionOptions {
  olderThanMs?: number;
  everyMs?: number;
  batchSize?: number;
  maxBatches?: number;
}

/** The built-in slot's definition (registered by ticks and schedule runners that opt into `sys`). */
export function retentionSchedule(o: RetentionOptions = {}): ScheduleDefinition {
  return defineSystemSchedule({
    name: SYS_RETENTION,
    job: retentionJob,
    everyMs: o.everyMs ?? DEFAULT_RETENTION_EVERY_MS,
    scheduleNamespace: SYSTEM_SCHEDULE_NAMESPACE,
    payload: {
      olderThanMs: o.olderThanMs ?? DEFAULT_RETENTION_MS,
      ...(o.batchSize !== undefined ? { batchSize: o.batchSize } : {}),
      ...(o.maxBatches !== undefined ? { maxBatches: o.maxBatches } : {}),
    },
  });
}

export interface RetentionResult {
  jobs: number;
  workers: number;
  batches: number;
  /** The run stopped at maxBatches with its last batch full: more is left to delete. */
  more: boolean;
}

/** Runs batches until one comes back short, the batch limit, or the signal aborts. */
export async function runRetention(client: Client, input: RetentionPayload, signal?: AbortSignal): Promise<RetentionResult> {
  const payload = parseInput(retentionPayloadSchema, input, 'retention settings');
  const out: RetentionResult = { jobs: 0, workers: 0, batches: 0, more: false };
  while (out.batches < payload.maxBatches && !signal?.aborted) {
    const r = await client.protocol.retentionBatch(client.calls, client.namespace, payload.olderThanMs, payload.batchSize);
    out.batches++;
    out.jobs += r.jobs;
    out.workers += r.workers;
    out.more = r.jobs >= payload.batchSize;
    if (!out.more) break;
  }
  return out;
}

/**
 * The sys.retention handler, bound to a client. A run that stopped at its
 * batch limit with more to delete enqueues the next run, due now, rather
 * than leave the rest to the next cadence: at the defaults (100,000 jobs a
 * run, hourly) a fleet finishing more than about 28 jobs a second would
 * never catch up. Each run stays short, so the sys queue's other jobs
 * (outbox delivery, alerts) take their turns between runs.
 */
export function retentionHandler(client: Client) {
  return async (payload: z.output<typeof retentionPayloadSchema>, ctx: { signal: AbortSignal }): Promise<RetentionResult & { continued?: string }> => {
    const r = await runRetention(client, payload, ctx.signal);
    if (!r.more || ctx.signal.aborted) return r;
    const next = await client.enqueue(retentionJob, payload);
    return { ...r, continued: next.id };
  };
}
