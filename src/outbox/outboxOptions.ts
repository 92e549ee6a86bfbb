// The `outbox` option of defineApp and of a Worker that fires the `sys`
// slots: the sinks events go to, the sys.outbox cadence and the delivery
// policy (batch size, parallel keys, lease, retries with capped backoff,
// dead-letter threshold, how long delivered events are kept), and which job
// lifecycle events the namespace publishes. Parsed once. Without sinks it
// only turns lifecycle events off (`{ lifecycle: [] }`): the choice is
// stored per namespace and outlives the option, so an app that drops its
// sinks needs a way to say so, and events published with no sink to take
// them would be kept forever.
import * as z from 'zod';
import { LIFECYCLE_EVENTS, type LifecycleEvent } from '../db/protocol/outbox.js';
import { parseConfig } from '../validation.js';
import { isSink, type Sink } from './sink.js';
import { sinkTopicsSchema } from './sinkOptions.js';
import { baseOverMax } from '../client/defineJob.js';

/** A failed delivery's longest backoff unless configured. */
const DEFAULT_BACKOFF_MAX_MS = 300_000;

/**
 * A sink: a builder's value, or a custom one. A custom sink's topics are
 * held to the builders' grammar: an event no sink takes counts as
 * delivered, so a topic that can never match ('order.paid ' with a space,
 * an empty list) would mark every event delivered without sending it.
 */
const sinkSchema = z
  .custom<Sink>(isSink, 'a sink must be a webhookSink(), lambdaSink() or eventBridgeSink() value, or an object with a name and deliver(event, signal)')
  .superRefine((sink, ctx) => {
    if (sink.topics === undefined) return;
    const r = sinkTopicsSchema.safeParse(sink.topics);
    if (r.success) return;
    for (const issue of r.error.issues) ctx.addIssue({ code: 'custom', path: ['topics', ...issue.path], message: issue.message });
  });

export const outboxOptionsSchema = z
  .object({
    /**
     * Where events go; each takes the topics it names (all by default).
     * None only with `lifecycle: []`: the option then turns job lifecycle
     * events off and delivers nothing.
     */
    sinks: z.array(sinkSchema).default([]),
    /** The sys.outbox cadence: a safety net under the wake-up that follows each commit. */
    everyMs: z.number().int().min(1000).max(86_400_000).default(60_000),
    /** Events one lease takes at most. */
    batchSize: z.number().int().min(1).max(1000).default(100),
    /** Keys delivered at once (events of one key go one after the other). */
    concurrency: z.number().int().min(1).max(256).default(8),
    /** How long a batch is held; a deliverer that dies frees it when this ends. */
    leaseMs: z.number().int().min(5000).max(3_600_000).default(60_000),
    /** After this many failed deliveries an event is dead (kept, not retried, listed for an operator). */
    maxAttempts: z.number().int().min(1).max(1000).default(10),
    backoff: z
      .object({ baseMs: z.number().int().min(0).max(3_600_000).default(1000), maxMs: z.number().int().min(0).max(86_400_000).default(DEFAULT_BACKOFF_MAX_MS) })
      .strict()
      .superRefine((b, ctx) => {
        if (b.baseMs > b.maxMs) ctx.addIssue({ code: 'custom', path: ['baseMs'], message: baseOverMax(b.baseMs, b.maxMs, DEFAULT_BACKOFF_MAX_MS) });
      })
      .default({ baseMs: 1000, maxMs: DEFAULT_BACKOFF_MAX_MS }),
    /**
     * Job lifecycle events the settlements publish through the outbox, in
     * the settlement's own statement: `succeeded` (topic workhorse.job.succeeded),
     * `failed` (an attempt failed and will be retried: workhorse.job.failed),
     * `dead` (failed for good: workhorse.job.dead), `decision` (a job opened
     * a wait for a human decision: workhorse.job.decision), `cancelled` (an
     * operator cancelled a job that had not ended: workhorse.job.cancelled).
     * Stored for the namespace at start; absent leaves the stored choice
     * alone, [] turns them off (with or without sinks).
     */
    lifecycle: z.array(z.enum(LIFECYCLE_EVENTS)).max(LIFECYCLE_EVENTS.length).optional(),
    /** Delivered events are deleted after this long. */
    keepDeliveredMs: z.number().int().min(0).max(366 * 86_400_000).default(7 * 86_400_000),
  })
  .strict()
  .superRefine((o, ctx) => {
    if (o.sinks.length > 0) return;
    if (o.lifecycle === undefined) {
      ctx.addIssue({ code: 'custom', path: ['sinks'], message: 'give at least one sink (without sinks, the outbox option only turns job lifecycle events off: { lifecycle: [] })' });
    } else if (o.lifecycle.length > 0) {
      ctx.addIssue({ code: 'custom', path: ['lifecycle'], message: 'job lifecycle events need a sink to deliver them: give sinks, or lifecycle: [] to turn them off' });
    }
  });

export type OutboxOptions = z.input<typeof outboxOptionsSchema>;
export type ResolvedOutboxOptions = z.output<typeof outboxOptionsSchema>;

export function parseOutboxOptions(o: OutboxOptions, what = 'outbox options'): ResolvedOutboxOptions {
  return parseConfig(outboxOptionsSchema, o, what);
}

/**
 * What the sys slots take from a parsed option: delivery only when there
 * are sinks (with none every event would count as delivered), and the
 * lifecycle choice to store either way.
 */
export function outboxSlotConfig(o: ResolvedOutboxOptions | undefined): { outbox: ResolvedOutboxOptions | undefined; lifecycle: LifecycleEvent[] | undefined } {
  return { outbox: o && o.sinks.length > 0 ? o : undefined, lifecycle: o?.lifecycle };
}
