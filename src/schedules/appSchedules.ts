// The check defineApp makes of its schedules, so a bad one fails when the
// app module loads rather than at a tick's start: no two different
// schedules share a name (the name alone keys a slot in its namespace,
// whatever its schedule namespace), and each schedule's job is one of the
// app's job types (a slot of a type the app does not handle would fire jobs
// no tick of it runs) with a payload that type's schema accepts. The job and
// payload check is toScheduleRow's, the one every path that stores a slot
// runs; only the payload size waits for the client's limit, at storing. A
// Worker (and a schedule runner) makes the same checks of its `schedules`
// when it is built: the name check in its options schema, the job check
// against its client's jobs.
import type * as z from 'zod';
import type { JobDefinition } from '../client/defineJob.js';
import { ConfigError, UnknownJobTypeError } from '../errors.js';
import { describeIssues } from '../validation.js';
import type { ScheduleDefinition } from './defineSchedule.js';
import { toScheduleRow } from './scheduleRow.js';

const NOT_IN_APP = "it is not among the app's jobs: add its defineJob() value to defineApp({ jobs })";

/** The first schedule that shares its name with a different one before it: its index and what is wrong. */
export function nameTwin(schedules: readonly ScheduleDefinition[]): { index: number; message: string } | undefined {
  const seen = new Map<string, ScheduleDefinition>();
  for (const [i, s] of schedules.entries()) {
    const twin = seen.get(s.name);
    if (twin !== undefined && twin !== s) return { index: i, message: `two different schedules are named "${s.name}"` };
    seen.set(s.name, s);
  }
  return undefined;
}

/** The first schedule that shares its name with a different one before it: a ConfigError at `prefix.<i>`. */
export function refuseNameTwins(schedules: ScheduleDefinition[], where: string, prefix: (string | number)[]): void {
  const twin = nameTwin(schedules);
  if (!twin) return;
  const path = [...prefix, twin.index];
  throw new ConfigError(`invalid ${where}: ${path.join('.')}: ${twin.message}`, [{ path, message: twin.message }]);
}

/**
 * The same check inside an options schema (a Worker's or a schedule
 * runner's `schedules`): two slots of one name would be upserted by one
 * statement, which PostgreSQL refuses (21000), so none would ever fire.
 */
export function refuseNameTwinsIssue(schedules: readonly ScheduleDefinition[] | undefined, ctx: z.RefinementCtx): void {
  const twin = nameTwin(schedules ?? []);
  if (twin) ctx.addIssue({ code: 'custom', path: ['schedules', twin.index], message: twin.message });
}

/** Throws a ConfigError naming the schedule (issue paths start `schedules.<i>`) for the first bad one. */
export function checkAppSchedules(schedules: ScheduleDefinition[], jobs: JobDefinition[]): void {
  refuseNameTwins(schedules, 'app', ['schedules']);
  const byType = new Map(jobs.map((j) => [j.type, j]));
  const resolve = (type: string): JobDefinition => {
    const d = byType.get(type);
    if (!d) throw new UnknownJobTypeError(type, NOT_IN_APP);
    return d;
  };
  // A job given as a definition is checked against the app's jobs too.
  checkScheduleJobs(schedules, jobAsType, resolve, Number.MAX_SAFE_INTEGER, 'app');
}

/** The schedule with its job named by type: a definition given is checked against the jobs the app (or client) has, as a type name is. */
export function jobAsType(s: ScheduleDefinition): ScheduleDefinition {
  return typeof s.job === 'string' ? s : { ...s, job: s.job.type };
}

/**
 * Each schedule's job, payload and options as toScheduleRow checks them
 * when the slot is stored, now: a ConfigError `invalid <where>: schedule
 * "<name>": schedules.<i>.<field>: ...` for the first bad one. A Worker
 * checks its `schedules` with its client's jobs when it is built, so one
 * that could never be stored is refused before the worker runs.
 */
export function checkScheduleJobs(
  schedules: readonly ScheduleDefinition[],
  asStored: (s: ScheduleDefinition) => ScheduleDefinition,
  resolve: (type: string) => JobDefinition,
  maxPayloadBytes: number,
  where: string,
): void {
  schedules.forEach((s, i) => {
    try {
      toScheduleRow(asStored(s), resolve, maxPayloadBytes);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const issues = err.issues.map((x) => ({ path: ['schedules', i, ...x.path], message: x.message }));
      throw new ConfigError(`invalid ${where}: schedule "${s.name}": ${describeIssues(issues)}`, issues, { cause: err });
    }
  });
}
