// workhorse's cron evaluator against croner, the library schedules used to
// run on (now a dev dependency, kept for this comparison): thousands of
// seeded random expressions, every form of the syntax and malformed ones
// too, must be accepted or refused alike, and give the same next and
// previous runs from reference instants clustered around daylight-saving
// changes in Europe/Paris, America/New_York, Australia/Lord_Howe (a
// 30-minute change), Asia/Kathmandu (its 1986 move to +05:45) and UTC.
// The deliberate differences are at the end, each asserted.
import { Cron } from 'croner';
import { describe, expect, it } from 'vitest';
import { parseCron } from '../../src/schedules/cronFields.js';
import { cronSchedule, type CronSchedule } from '../../src/schedules/cronSchedule.js';
import { cronExpression, random, referenceInstant, ZONES } from './cronGenerator.js';

const EXPRESSIONS_PER_ZONE = 1200;
const REFERENCES = 2;
const RUNS = 3;

const iso = (t: number | null) => (t === null ? null : new Date(t).toISOString());

function croner(expression: string, timezone: string): Cron | Error {
  try {
    return new Cron(expression, { paused: true, timezone });
  } catch (err) {
    return err as Error;
  }
}

function ours(expression: string, timezone: string): CronSchedule | Error {
  try {
    return cronSchedule(expression, timezone);
  } catch (err) {
    return err as Error;
  }
}

/** The next and previous `RUNS` runs from `ref`, each found from the one before. */
function cronerRuns(c: Cron, ref: number) {
  const next: (string | null)[] = [];
  for (let at = new Date(ref), i = 0; i < RUNS; i++) {
    const run = c.nextRun(at);
    next.push(run ? run.toISOString() : null);
    if (!run) break;
    at = run;
  }
  return { next, previous: c.previousRuns(RUNS, new Date(ref)).map((d) => d.toISOString()) };
}

function ourRuns(s: CronSchedule, ref: number) {
  const next: (string | null)[] = [];
  for (let at = ref, i = 0; i < RUNS; i++) {
    const run = s.next(at);
    next.push(iso(run));
    if (run === null) break;
    at = run;
  }
  const previous: string[] = [];
  for (let at: number | null = s.previous(ref); at !== null && previous.length < RUNS; at = s.previous(at)) previous.push(iso(at)!);
  return { next, previous };
}

describe('the cron evaluator against croner', () => {
  for (const [z, zone] of ZONES.entries()) {
    it(`gives the same next and previous runs in ${zone}`, () => {
      const r = random(1000 + z);
      const mismatches: unknown[] = [];
      let compared = 0;
      let refused = 0;
      for (let i = 0; i < EXPRESSIONS_PER_ZONE; i++) {
        const expression = cronExpression(r, zone);
        const c = croner(expression, zone);
        const s = ours(expression, zone);
        if (c instanceof Error || s instanceof Error) {
          if (!(c instanceof Error && s instanceof Error)) {
            mismatches.push({ expression, croner: c instanceof Error ? c.message : 'accepted', ours: s instanceof Error ? s.message : 'accepted' });
          }
          refused++;
          continue;
        }
        for (let k = 0; k < REFERENCES; k++) {
          const ref = referenceInstant(r, zone);
          const [want, got] = [cronerRuns(c, ref), ourRuns(s, ref)];
          compared++;
          try {
            expect(got).toEqual(want);
          } catch {
            mismatches.push({ expression, zone, reference: iso(ref), croner: want, ours: got });
          }
        }
      }
      expect(mismatches.slice(0, 5)).toEqual([]);
      // The generator is worth something: most expressions parse, some do not.
      expect(compared).toBeGreaterThan(EXPRESSIONS_PER_ZONE * REFERENCES * 0.8);
      expect(refused).toBeGreaterThan(EXPRESSIONS_PER_ZONE * 0.03);
    }, 60_000);
  }

  it('accepts and refuses the same expressions (many more, malformed half the time)', () => {
    const r = random(7);
    const mismatches: unknown[] = [];
    let accepted = 0;
    for (let i = 0; i < 30_000; i++) {
      const expression = cronExpression(r, undefined, 0.5);
      const c = croner(expression, 'UTC');
      let parsed = true;
      try {
        parseCron(expression);
      } catch {
        parsed = false;
      }
      if (!(c instanceof Error)) accepted++;
      if (parsed === c instanceof Error) mismatches.push({ expression, croner: c instanceof Error ? c.message : 'accepted', ours: parsed });
    }
    expect(mismatches.slice(0, 10)).toEqual([]);
    expect(accepted).toBeGreaterThan(5000);
    expect(accepted).toBeLessThan(25_000);
  });

  it('treats the odd corners of the syntax as croner does', () => {
    const fields = [
      ...['SUN-SUN', 'MON#2,MON', '+*', '1#02', '5-6L', '*/2L', 'FRIL', 'FRI#l', '7L', '0-7', '*/7', 'SAT-SUN', 'mon-fri/2', '1-5/2#3', '*/2#3', '1-2#3'].map((d) => `0 0 * * ${d}`),
      ...['L,L', '*,L', 'LW', 'lw', 'L,15', '15,L', 'L,15W', '15W', '15w', '*/31', '1-31/31'].map((d) => `0 0 ${d} * *`),
      ...['0-61/40', '*/60', '00005', '?/5', '*/5,?', '1-59/59'].map((m) => `${m} * * * *`),
      ...['*/10000', '*/9999', '*,2030', '2020-2030/5'].map((y) => `0 0 0 1 1 * ${y}`),
      ...['@DAILY', ' @hourly ', '\t0\t0 * *\t*', '0 0 29 2 *', '0 0 30 2 *', '0 0 29 2 +MON'],
    ];
    for (const expression of fields) {
      const c = croner(expression, 'Europe/Paris');
      const s = ours(expression, 'Europe/Paris');
      expect(s, expression).not.toBeInstanceOf(Error);
      expect(c, expression).not.toBeInstanceOf(Error);
      const ref = Date.parse('2024-10-26T22:17:31.250Z');
      expect(ourRuns(s as CronSchedule, ref), expression).toEqual(cronerRuns(c as Cron, ref));
    }
    for (const expression of ['0 0 * * ++MON', '0 0 * * *#2', '0 0 * * MON#6', '0 0 L-5 * *', '0 0 LW,3 * *', '0 0 1-5W * *', '5/10 * * * *', '@reboot', '@often', '* * * *']) {
      expect(croner(expression, 'UTC'), expression).toBeInstanceOf(Error);
      expect(ours(expression, 'UTC'), expression).toBeInstanceOf(Error);
    }
  });
});

describe('the deliberate differences from croner (docs/serverless.md lists them)', () => {
  it('refuses a date: croner schedules a one-off run from an ISO 8601 string, a workhorse schedule recurs', () => {
    expect(croner('2030-01-01T00:00:00', 'UTC')).toBeInstanceOf(Cron);
    expect(() => parseCron('2030-01-01T00:00:00')).toThrow(/a date or time of day is not a cron expression/);
  });

  it('reads an expression without a time zone in UTC, as documented; croner read it in the process’s local zone', () => {
    const before = process.env.TZ;
    process.env.TZ = 'Asia/Tokyo';
    try {
      const from = new Date('2030-01-01T12:00:00Z');
      expect(new Cron('0 0 * * *', { paused: true }).nextRun(from)?.toISOString()).toBe('2030-01-01T15:00:00.000Z');
      expect(iso(cronSchedule('0 0 * * *', null).next(from.getTime()))).toBe('2030-01-02T00:00:00.000Z');
    } finally {
      if (before === undefined) delete process.env.TZ;
      else process.env.TZ = before;
    }
  });
});
