// A job definition: the type name, the zod schema every payload must pass
// before anything is written, and the defaults for queue, retry policy and
// timeout. Definitions are values, shared by the enqueuing side and workers.
import * as z from 'zod';
import { jobTypeSchema, queueNameSchema } from '../names.js';
import { parseConfig, quotedField } from '../validation.js';

const backoffKindSchema = z.enum(['exponential', 'linear', 'fixed']);
const backoffMsSchema = z.number().int().min(0).max(2_147_483_647);
const DEFAULT_BACKOFF_MAX_MS = 3_600_000;

/** How retries are spaced. Unknown keys are refused, and the base delay may not exceed the cap. */
export const backoffSchema = z
  .object({
    kind: backoffKindSchema.default('exponential'),
    baseMs: backoffMsSchema.default(1000),
    maxMs: backoffMsSchema.default(DEFAULT_BACKOFF_MAX_MS),
  })
  .strict()
  .superRefine((b, ctx) => {
    if (b.baseMs > b.maxMs) ctx.addIssue({ code: 'custom', path: ['baseMs'], message: baseOverMax(b.baseMs, b.maxMs, DEFAULT_BACKOFF_MAX_MS) });
  });

/**
 * The issue of a base delay above the cap, with both values: the cap may be
 * the default, which the user never wrote.
 */
export function baseOverMax(baseMs: number, maxMs: number, defaultMaxMs?: number): string {
  const dflt = maxMs === defaultMaxMs ? ', its default' : '';
  return `baseMs (${baseMs}) must not exceed maxMs (${maxMs}${dflt})`;
}

/** A backoff whose fields are each optional and have no defaults: a per-enqueue override of a definition's. */
export const backoffOverrideSchema = z
  .object({ kind: backoffKindSchema.optional(), baseMs: backoffMsSchema.optional(), maxMs: backoffMsSchema.optional() })
  .strict()
  .superRefine((b, ctx) => {
    if (b.baseMs !== undefined && b.maxMs !== undefined && b.baseMs > b.maxMs) ctx.addIssue({ code: 'custom', path: ['baseMs'], message: baseOverMax(b.baseMs, b.maxMs) });
  });

export const retrySchema = z
  .object({
    maxAttempts: z.number().int().min(1).max(1000).default(25),
    backoff: backoffSchema.default({ kind: 'exponential', baseMs: 1000, maxMs: 3_600_000 }),
  })
  .strict();

/** A zod schema, as a job's payload schema or a signal wait's. */
export const zodSchema = z.custom<z.ZodType>((v) => v instanceof z.ZodType, 'schema must be a zod schema');

export type RetryPolicy = z.output<typeof retrySchema>;
export type RetryPolicyInput = z.input<typeof retrySchema>;

const definitionSchema = z
  .object({
    type: jobTypeSchema,
    schema: zodSchema,
    queue: queueNameSchema.default('default'),
    priority: z.number().int().min(-32768).max(32767).default(0),
    retry: retrySchema.default({ maxAttempts: 25, backoff: { kind: 'exponential', baseMs: 1000, maxMs: 3_600_000 } }),
    timeoutMs: z.number().int().positive().max(2_147_483_647).optional(),
  })
  .strict();

/** Whether `v` has every field defineJob fills in (a hand-made `{ type, schema }` has not; its values are checked by definitionSchema). */
function hasEveryField(v: object): boolean {
  const d = v as Record<string, unknown>;
  const retry = d.retry as Record<string, unknown> | null | undefined;
  const backoff = retry?.backoff as Record<string, unknown> | null | undefined;
  return ['type', 'schema', 'queue', 'priority'].every((k) => k in d) && !!retry && 'maxAttempts' in retry && !!backoff && ['kind', 'baseMs', 'maxMs'].every((k) => k in backoff);
}

/** Definitions already checked (every defineJob value, and complete ones made another way). */
const checked = new WeakSet<object>();

export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  readonly type: string;
  readonly schema: S;
  readonly queue: string;
  readonly priority: number;
  readonly retry: RetryPolicy;
  readonly timeoutMs: number | undefined;
}

export interface JobDefinitionInput<S extends z.ZodType> {
  type: string;
  schema: S;
  queue?: string;
  /** Lower runs first. Default 0. */
  priority?: number;
  retry?: RetryPolicyInput;
  /** The handler's time limit; a tick only claims a job whose timeout fits its time left. */
  timeoutMs?: number;
}

/** Payload type a definition accepts at enqueue. */
export type PayloadInput<D> = D extends JobDefinition<infer S> ? z.input<S> : never;
/** Payload type a handler of the definition receives. */
export type PayloadOutput<D> = D extends JobDefinition<infer S> ? z.output<S> : never;

/**
 * The one check that a value is a job definition: what defineJob returns,
 * or an object with every field it has (a type name, a zod schema, a queue,
 * a priority, a retry policy). A hand-made `{ type, schema }` is not one:
 * it would pass every constructor and fail at the first enqueue.
 */
export function isJobDefinition(v: unknown): v is JobDefinition {
  if (typeof v !== 'object' || v === null) return false;
  if (checked.has(v)) return true;
  let ok: boolean;
  try {
    ok = hasEveryField(v) && definitionSchema.safeParse(v).success;
  } catch {
    ok = false; // a getter or proxy that throws
  }
  if (ok) checked.add(v);
  return ok;
}

export function defineJob<S extends z.ZodType>(input: JobDefinitionInput<S>): JobDefinition<S> {
  const d = parseConfig(definitionSchema, input, `job definition${quotedField(input, 'type')}`);
  const def = Object.freeze({ ...d, schema: input.schema }) as JobDefinition<S>;
  checked.add(def);
  return def;
}

