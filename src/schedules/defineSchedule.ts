// A recurring slot's definition: its name, its cadence (a cron expression,
// parsed by cronFields.ts, or a fixed interval), the schedule namespace
// workers opt into, and the job each cadence enqueues. Validated once, at
// definition, so a malformed cron (or a payload the job's schema refuses)
// fails when the app loads, not at 3 a.m.
import * as z from 'zod';
import { backoffOverrideSchema, isJobDefinition, type JobDefinition, type PayloadInput } from '../client/defineJob.js';
import { enqueueOptionsSchema } from '../client/enqueueInput.js';
import { STORED_PAYLOAD_HINT, storedPayloadIssuesOf } from '../client/storedPayloadCheck.js';
import { ConfigError } from '../errors.js';
import { jobTypeSchema } from '../names.js';
import { parseConfig, quotedField, safeParseSync } from '../validation.js';
import { parseCron } from './cronFields.js';
import { cronSchedule } from './cronSchedule.js';
import { zoneClock, zoneName } from './zoneClock.js';
import type { ExactlyOne } from '../exclusiveOptions.js';

/** Names of built-in slots start with this; user schedules may not. */
export const SYSTEM_PREFIX = 'sys.';

export const scheduleNameSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.:-]{1,100}$/, 'a schedule name is 1-100 characters of letters, digits, "_", ".", ":" or "-"');
export const scheduleNamespaceSchema = z
  .string()
  .regex(/^[A-Za-z0-9_.-]{1,40}$/, 'a schedule namespace is 1-40 characters of letters, digits, "_", "." or "-"');

/** The enqueue options a slot's job may carry (no dedupe key: the slot sets it). */
const jobOptionsSchema = z
  .object({
    queue: z.string().optional(),
    priority: z.number().optional(),
    maxAttempts: z.number().optional(),
    // Typed as enqueue's; checked with the rest below (enqueueOptionsSchema), so its messages are enqueue's.
    backoff: z.custom<z.input<typeof backoffOverrideSchema>>(() => true).optional(),
    timeoutMs: z.number().optional(),
  })
  .strict();

/** 0001-01-01T00:00:00Z, the first instant a cron's year field can name. */
const FIRST_INSTANT = Date.parse('0001-01-01T00:00:00Z');

const definitionSchema = z
  .object({
    name: scheduleNameSchema,
    /** The job definition (or job type) each cadence enqueues. */
    job: z.union([jobTypeSchema, z.custom<JobDefinition>(isJobDefinition, 'job must be a job type or a defineJob() value')]),
    payload: z.unknown().optional(),
    /** A 5-, 6- or 7-field cron expression, or a nickname such as @daily (docs/serverless.md lists the syntax). */
    cron: z.string().min(1).max(200).optional(),
    /** IANA time zone the cron expression is read in; UTC when absent. */
    timezone: z.string().min(1).max(100).optional(),
    /** A fixed interval instead of a cron expression. */
    everyMs: z.number().int().min(1000).max(366 * 86_400_000).optional(),
    scheduleNamespace: scheduleNamespaceSchema.default('default'),
    /** Applied when the slot is stored; absent leaves an existing slot's state alone. */
    enabled: z.boolean().optional(),
    /** Overrides of the job definition's queue, priority, retry policy and timeout. */
    options: jobOptionsSchema.default({}),
  })
  .strict()
  .superRefine((d, ctx) => {
    if ((d.cron === undefined) === (d.everyMs === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['cron'], message: 'give exactly one of cron or everyMs' });
    }
    if (d.timezone !== undefined && d.cron === undefined) {
      ctx.addIssue({ code: 'custom', path: ['timezone'], message: 'timezone applies to cron schedules only' });
    }
    if (d.timezone !== undefined) {
      try {
        zoneClock(d.timezone);
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['timezone'], message: (err as Error).message });
        return;
      }
    }
    if (d.cron !== undefined) {
      try {
        parseCron(d.cron);
        // A day no calendar has (30 February) would be a slot stored to fire in 9999. One whose
        // years are past is accepted (it never fires again): refusing it would fail a deployed app
        // at start-up once its year ended.
        // next() is strictly after: a match at the first instant itself (or, in a zone ahead of UTC, just
        // before it) is found looking back from two days later.
        const cron = cronSchedule(d.cron, d.timezone ?? null);
        if (cron.next(FIRST_INSTANT) === null && cron.previous(FIRST_INSTANT + 2 * 86_400_000) === null) {
          ctx.addIssue({ code: 'custom', path: ['cron'], message: `cron expression "${d.cron}" never fires: no date in any year matches it` });
        }
      } catch (err) {
        ctx.addIssue({ code: 'custom', path: ['cron'], message: `invalid cron expression "${d.cron}": ${(err as Error).message}` });
      }
    }
    if (typeof d.job !== 'string') {
      // The payload each cadence enqueues, checked by the job's own schema
      // now: unchecked here, a wrong one was refused only when the slot was
      // stored (schedules.define, or the start of every tick of the app).
      // A job named by type is checked then, by the client's definition.
      const p = safeParseSync(d.job.schema, d.payload ?? {}, `the payload of schedule "${d.name}"`);
      if (!p.success) {
        for (const i of p.error.issues) ctx.addIssue({ code: 'custom', path: ['payload', ...i.path.map(String)], message: i.message });
      } else {
        // And read back from the JSON each cadence stores, as its worker will.
        for (const i of storedPayloadIssuesOf(d.job.schema, p.data)) {
          ctx.addIssue({ code: 'custom', path: ['payload', ...i.path.map(String)], message: `${i.message}; ${STORED_PAYLOAD_HINT}` });
        }
      }
    }
    const r = enqueueOptionsSchema.safeParse(d.options);
    if (!r.success) {
      for (const i of r.error.issues) ctx.addIssue({ code: 'custom', path: ['options', ...i.path.map(String)], message: i.message });
    }
  });

export type ScheduleDefinitionInput = z.input<typeof definitionSchema>;

/**
 * What defineSchedule takes: with a job definition whose schema is known,
 * `payload` is typed by it, as in enqueue; with a job type named by string
 * it is checked when the slot is stored. A `cron` or an `everyMs`, exactly one.
 */
export type ScheduleInput<J extends JobDefinition | string = JobDefinition | string> = ExactlyOne<Omit<ScheduleDefinitionInput, 'job' | 'payload'>, 'cron', 'everyMs'> & {
  /** The job definition (or job type) each cadence enqueues. */
  job: J;
  /** The payload each cadence enqueues; `{}` when absent. */
  payload?: J extends JobDefinition ? PayloadInput<J> : unknown;
};

export interface ScheduleDefinition {
  readonly name: string;
  readonly scheduleNamespace: string;
  readonly cron: string | null;
  readonly timezone: string | null;
  readonly everyMs: number | null;
  readonly job: JobDefinition | string;
  readonly payload: unknown;
  readonly enabled: boolean | undefined;
  readonly options: ScheduleJobOptions;
}

export interface ScheduleJobOptions {
  queue?: string;
  priority?: number;
  maxAttempts?: number;
  backoff?: { kind?: 'exponential' | 'linear' | 'fixed'; baseMs?: number; maxMs?: number };
  timeoutMs?: number;
}

function build(input: ScheduleInput, allowSystem: boolean): ScheduleDefinition {
  const what = `schedule${quotedField(input, 'name')}`;
  const d = parseConfig(definitionSchema, input, what);
  if (!allowSystem && d.name.startsWith(SYSTEM_PREFIX)) {
    const message = `names starting with "${SYSTEM_PREFIX}" are reserved for built-in slots`;
    throw new ConfigError(`invalid ${what}: name: ${message}`, [{ path: ['name'], message }]);
  }
  return Object.freeze({
    name: d.name,
    scheduleNamespace: d.scheduleNamespace,
    cron: d.cron ?? null,
    timezone: d.timezone === undefined ? null : zoneName(d.timezone),
    everyMs: d.everyMs ?? null,
    job: d.job,
    payload: d.payload ?? {},
    enabled: d.enabled,
    options: d.options as ScheduleJobOptions,
  });
}

/**
 * Whether a value has the shape defineSchedule gives (what defineApp and
 * schedules.define take): a hand-made object or a stray value would fail
 * with a TypeError deep in storing it.
 */
export function isScheduleDefinition(v: unknown): v is ScheduleDefinition {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as ScheduleDefinition;
  return (
    typeof d.name === 'string' &&
    typeof d.scheduleNamespace === 'string' &&
    (typeof d.job === 'string' || isJobDefinition(d.job)) &&
    (typeof d.cron === 'string' || typeof d.everyMs === 'number') &&
    typeof d.options === 'object' &&
    d.options !== null
  );
}

/**
 * Defines a recurring slot. Throws ConfigError (naming the field) for a
 * malformed cron expression, an unknown time zone, both or neither of
 * `cron` and `everyMs`, a payload the job definition's schema refuses, or a
 * reserved `sys.` name.
 */
export function defineSchedule<J extends JobDefinition | string>(input: ScheduleInput<J>): ScheduleDefinition {
  return build(input, false);
}

/** For the built-in sys.* slots only. */
export function defineSystemSchedule(input: ScheduleInput): ScheduleDefinition {
  return build(input, true);
}
