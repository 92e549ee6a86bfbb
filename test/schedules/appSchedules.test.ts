// defineApp refuses a bad schedule when the app module loads, with a
// ConfigError naming the schedule and the field: two different schedules of
// one name (in any schedule namespaces: the name alone keys the slot), a
// job type that is not among the app's jobs, and a payload that job's schema
// refuses when the job is named by its type string.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, defineApp, defineJob, defineSchedule } from '../../src/index.js';

const Report = defineJob({ type: 'report.build', schema: z.object({ scope: z.string() }) });
const Other = defineJob({ type: 'report.other', schema: z.object({}) });
const configure = () => undefined;

function refusal(schedules: ReturnType<typeof defineSchedule>[]): ConfigError {
  try {
    defineApp({ jobs: [Report], configure, schedules });
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('defineApp accepted the app');
}

describe("defineApp's check of its schedules", () => {
  it('refuses two different schedules of one name in different schedule namespaces', () => {
    const a = defineSchedule({ name: 'report.nightly', job: Report, payload: { scope: 'all' }, everyMs: 60_000 });
    const b = defineSchedule({ name: 'report.nightly', job: Report, payload: { scope: 'eu' }, everyMs: 60_000, scheduleNamespace: 'reports' });
    const err = refusal([a, b]);
    expect(err.message).toContain('two different schedules are named "report.nightly"');
    expect(err.issues[0]!.path).toEqual(['schedules', 1]);
  });

  it('refuses a schedule whose job type string is not among the app jobs, naming the schedule', () => {
    const err = refusal([defineSchedule({ name: 'report.typo', job: 'report.biuld', everyMs: 60_000 })]);
    expect(err.message).toMatch(/^invalid app: schedule "report\.typo": schedules\.0\.job: unknown job type "report\.biuld": it is not among the app's jobs/);
    expect(err.issues[0]!.path).toEqual(['schedules', 0, 'job']);
  });

  it('refuses a schedule whose job definition is not among the app jobs', () => {
    const err = refusal([defineSchedule({ name: 'report.elsewhere', job: Other, everyMs: 60_000 })]);
    expect(err.message).toContain('schedule "report.elsewhere"');
    expect(err.message).toContain('unknown job type "report.other"');
  });

  it('refuses a payload the schema of a job named by its type refuses, naming the schedule and the field', () => {
    const err = refusal([defineSchedule({ name: 'report.bad', job: 'report.build', payload: { scope: 1 }, everyMs: 60_000 })]);
    expect(err.message).toMatch(/^invalid app: schedule "report\.bad": schedules\.0\.payload\.scope: /);
    expect(err.issues[0]!.path).toEqual(['schedules', 0, 'payload', 'scope']);
  });

  it('accepts valid schedules, and the same definition listed twice', () => {
    const ok = defineSchedule({ name: 'report.ok', job: 'report.build', payload: { scope: 'all' }, everyMs: 60_000 });
    const app = { jobs: [Report], configure, schedules: [ok, ok] };
    expect(defineApp(app)).toBe(app);
  });
});
