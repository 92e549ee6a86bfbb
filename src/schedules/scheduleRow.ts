// Turns a schedule definition into the row upsert_schedules_v1 stores. The
// slot's job is built and validated here exactly like an enqueue (payload
// against the job's zod schema, options, size), once, so every cadence
// inserts a row that is already known to be valid.
import type { JobDefinition } from '../client/defineJob.js';
import { buildJobInsert, type EnqueueOptions } from '../client/enqueueInput.js';
import type { ScheduleRow } from '../db/protocol.js';
import { firstRunAfter } from './cadence.js';
import type { ScheduleDefinition } from './defineSchedule.js';

export function toScheduleRow(
  def: ScheduleDefinition,
  resolve: (type: string) => JobDefinition,
  maxPayloadBytes: number,
  now: Date = new Date(),
): ScheduleRow {
  const jobDef = typeof def.job === 'string' ? resolve(def.job) : def.job;
  const job = buildJobInsert(jobDef, def.payload, def.options as EnqueueOptions, maxPayloadBytes);
  const row: ScheduleRow = {
    name: def.name,
    schedule_namespace: def.scheduleNamespace,
    cron: def.cron,
    timezone: def.timezone,
    interval_ms: def.everyMs,
    job: job as unknown as Record<string, unknown>,
  };
  if (def.enabled !== undefined) row.enabled = def.enabled;
  // Interval slots are anchored on the database clock (now + interval) by the SQL.
  if (def.cron !== null) row.first_run_at = firstRunAfter({ cron: def.cron, timezone: def.timezone, intervalMs: null }, now).toISOString();
  return row;
}
