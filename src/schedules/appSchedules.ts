// The check defineApp makes of its schedules, so a bad one fails when the
// app module loads rather than at a tick's start: no two different
// schedules share a name (the name alone keys a slot in its namespace,
// whatever its schedule namespace), and each schedule's job is one of the
// app's job types (a slot of a type the app does not handle would fire jobs
// no tick of it runs) with a payload that type's schema accepts. The job and
// payload check is toScheduleRow's, the one every path that stores a slot
// runs; only the payload size waits for the client's limit, at storing.
import type { JobDefinition } from '../client/defineJob.js';
import { ConfigError, UnknownJobTypeError } from '../errors.js';
import { describeIssues } from '../validation.js';
import type { ScheduleDefinition } from './defineSchedule.js';
import { toScheduleRow } from './scheduleRow.js';

const NOT_IN_APP = "it is not among the app's jobs: add its defineJob() value to defineApp({ jobs })";

/** The first schedule that shares its name with a different one before it: a ConfigError at `prefix.<i>`. */
export function refuseNameTwins(schedules: ScheduleDefinition[], where: string, prefix: (string | number)[]): void {
  const seen = new Map<string, ScheduleDefinition>();
  schedules.forEach((s, i) => {
    const twin = seen.get(s.name);
    if (twin !== undefined && twin !== s) {
      const message = `two different schedules are named "${s.name}"`;
      throw new ConfigError(`invalid ${where}: ${[...prefix, i].join('.')}: ${message}`, [{ path: [...prefix, i], message }]);
    }
    seen.set(s.name, s);
  });
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
  schedules.forEach((s, i) => {
    try {
      // A job given as a definition is checked against the app's jobs too.
      toScheduleRow(typeof s.job === 'string' ? s : { ...s, job: s.job.type }, resolve, Number.MAX_SAFE_INTEGER);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      const issues = err.issues.map((x) => ({ path: ['schedules', i, ...x.path], message: x.message }));
      throw new ConfigError(`invalid app: schedule "${s.name}": ${describeIssues(issues)}`, issues, { cause: err });
    }
  });
}
