// Turns a schedule definition into the row upsert_schedules_v1 stores. The
// slot's job is built and validated here exactly like an enqueue (payload
// against the job's zod schema, options, size), once, so every cadence
// inserts a row that is already known to be valid. This is the one check of
// a slot's job, run by every path that stores one (defineApp, a tick's
// start, the schedule runner, Schedules.define): a job type that does not
// resolve, or a payload or option its job refuses, is a ConfigError naming
// the schedule and the field (job, payload.<path>, options.<path>).
import type { JobDefinition } from '../client/defineJob.js';
import { buildJobInsert, enqueueOptionsSchema, type EnqueueOptions, type SizedJobInsert } from '../client/enqueueInput.js';
import type { ScheduleRow } from '../db/protocol.js';
import { ConfigError, PayloadTooLargeError, UnknownJobTypeError, ValidationError, type ValidationIssue } from '../errors.js';
import { describeIssues, safeParseSync, toIssues } from '../validation.js';
import { firstRunAfter } from './cadence.js';
import type { ScheduleDefinition } from './defineSchedule.js';

export function toScheduleRow(
  def: ScheduleDefinition,
  resolve: (type: string) => JobDefinition,
  maxPayloadBytes: number,
  now: Date = new Date(),
): ScheduleRow {
  const job = scheduleJob(def, resolve, maxPayloadBytes);
  const row: ScheduleRow = {
    name: def.name,
    schedule_namespace: def.scheduleNamespace,
    cron: def.cron,
    timezone: def.timezone,
    interval_ms: def.everyMs,
    job: job as unknown as Record<string, unknown>,
  };
  if (def.enabled !== undefined) row.enabled = def.enabled;
  return startingFrom(row, now);
}

/**
 * The row with a cron slot's first run the first cadence after `now`
 * (interval slots are anchored on the database clock, now + interval, by
 * the SQL). A caller that checked its rows before asking the database for
 * its clock re-dates them with it.
 */
export function startingFrom(row: ScheduleRow, now: Date): ScheduleRow {
  if (row.cron === null) return row;
  return { ...row, first_run_at: firstRunAfter({ cron: row.cron, timezone: row.timezone, intervalMs: null }, now).toISOString() };
}

/** The job each cadence enqueues, or a ConfigError naming the schedule and the field. */
function scheduleJob(def: ScheduleDefinition, resolve: (type: string) => JobDefinition, maxPayloadBytes: number): SizedJobInsert {
  const refuse = (issues: ValidationIssue[], cause?: unknown): never => {
    throw new ConfigError(`invalid schedule "${def.name}": ${describeIssues(issues)}`, issues, { cause });
  };
  let jobDef: JobDefinition;
  try {
    jobDef = typeof def.job === 'string' ? resolve(def.job) : def.job;
  } catch (err) {
    if (!(err instanceof UnknownJobTypeError)) throw err;
    return refuse([{ path: ['job'], message: err.message }], err);
  }
  try {
    return buildJobInsert(jobDef, def.payload, def.options as EnqueueOptions, maxPayloadBytes);
  } catch (err) {
    if (err instanceof PayloadTooLargeError) return refuse([{ path: ['payload'], message: err.message }], err);
    if (!(err instanceof ValidationError)) throw err;
    // Which part was refused, named as the schedule's field: the payload by
    // its schema, else the options, else a payload JSON cannot hold.
    const payload = safeParseSync(jobDef.schema, def.payload, `the payload of schedule "${def.name}"`);
    if (!payload.success) return refuse(prefixed('payload', toIssues(payload.error)));
    const options = enqueueOptionsSchema.safeParse(def.options);
    if (!options.success) return refuse(prefixed('options', toIssues(options.error)));
    return refuse(prefixed('payload', err.issues), err);
  }
}

function prefixed(field: string, issues: ValidationIssue[]): ValidationIssue[] {
  return issues.map((i) => ({ path: [field, ...i.path], message: i.message }));
}
