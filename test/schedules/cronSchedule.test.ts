// The cron evaluator on its own terms: what docs/serverless.md promises for
// the syntax, the clear errors defineSchedule shows for a bad expression,
// and the daylight-saving rules (a skipped wall time, a repeated one) in
// zones that change by an hour, by half an hour, and by a quarter.
import { describe, expect, it } from 'vitest';
import { defineSchedule } from '../../src/index.js';
import { parseCron } from '../../src/schedules/cronFields.js';
import { cronSchedule } from '../../src/schedules/cronSchedule.js';
import { firstRunAfter } from '../../src/schedules/cadence.js';

/** The next `n` runs strictly after `from` (ISO strings, seconds precision). */
function next(expression: string, zone: string | null, from: string, n = 3): string[] {
  const s = cronSchedule(expression, zone);
  const out: string[] = [];
  for (let t: number | null = Date.parse(from); out.length < n; ) {
    t = s.next(t);
    if (t === null) break;
    out.push(new Date(t).toISOString().replace('.000Z', 'Z'));
  }
  return out;
}

/** The previous `n` runs strictly before `before`, newest first. */
function previous(expression: string, zone: string | null, before: string, n = 3): string[] {
  const s = cronSchedule(expression, zone);
  const out: string[] = [];
  for (let t: number | null = Date.parse(before); out.length < n; ) {
    t = s.previous(t);
    if (t === null) break;
    out.push(new Date(t).toISOString().replace('.000Z', 'Z'));
  }
  return out;
}

describe('the syntax', () => {
  it('reads 5 fields from the minute, 6 from the second, 7 with a year', () => {
    expect(next('30 9 * * *', null, '2030-01-01T00:00:00Z', 1)).toEqual(['2030-01-01T09:30:00Z']);
    expect(next('15 30 9 * * *', null, '2030-01-01T00:00:00Z', 1)).toEqual(['2030-01-01T09:30:15Z']);
    expect(next('0 0 0 1 1 * 2032', null, '2030-01-01T00:00:00Z', 2)).toEqual(['2032-01-01T00:00:00Z']);
  });

  it('takes lists, ranges, steps, names and ? for any value', () => {
    expect(next('0 8-10/2,17 * * MON-FRI', null, '2030-01-04T09:00:00Z', 4)).toEqual([
      '2030-01-04T10:00:00Z',
      '2030-01-04T17:00:00Z',
      '2030-01-07T08:00:00Z',
      '2030-01-07T10:00:00Z',
    ]);
    expect(next('0 0 1 jan,Jul ?', null, '2030-01-02T00:00:00Z', 2)).toEqual(['2030-07-01T00:00:00Z', '2031-01-01T00:00:00Z']);
    expect(next('*/20 * * * * *', null, '2030-01-01T00:00:05Z', 3)).toEqual(['2030-01-01T00:00:20Z', '2030-01-01T00:00:40Z', '2030-01-01T00:01:00Z']);
  });

  it('fires on either day field unless one is * (or + asks for both)', () => {
    // The 13th, or any Friday; with +, only a Friday the 13th.
    expect(next('0 0 13 * FRI', null, '2030-09-01T00:00:00Z', 3)).toEqual(['2030-09-06T00:00:00Z', '2030-09-13T00:00:00Z', '2030-09-20T00:00:00Z']);
    expect(next('0 0 13 * +FRI', null, '2030-01-01T00:00:00Z', 2)).toEqual(['2030-09-13T00:00:00Z', '2030-12-13T00:00:00Z']);
  });

  it('knows L, LW, nW and day#n', () => {
    expect(next('0 0 L * *', null, '2030-02-01T00:00:00Z', 2)).toEqual(['2030-02-28T00:00:00Z', '2030-03-31T00:00:00Z']);
    // June 2030 ends on a Sunday: its last weekday is Friday the 28th.
    expect(next('0 0 LW * *', null, '2030-06-01T00:00:00Z', 1)).toEqual(['2030-06-28T00:00:00Z']);
    // 1 June 2030 is a Saturday: 1W is Monday the 3rd (it does not leave the month).
    expect(next('0 0 1W * *', null, '2030-05-31T00:00:00Z', 1)).toEqual(['2030-06-03T00:00:00Z']);
    expect(next('0 0 * * MON#2', null, '2030-01-01T00:00:00Z', 1)).toEqual(['2030-01-14T00:00:00Z']);
    expect(next('0 0 * * FRI#L', null, '2030-01-01T00:00:00Z', 1)).toEqual(['2030-01-25T00:00:00Z']);
    expect(next('0 0 * * 5L', null, '2030-01-01T00:00:00Z', 1)).toEqual(['2030-01-25T00:00:00Z']);
  });

  it('knows the nicknames', () => {
    expect(next('@yearly', null, '2030-06-01T00:00:00Z', 1)).toEqual(['2031-01-01T00:00:00Z']);
    expect(next('@annually', null, '2030-06-01T00:00:00Z', 1)).toEqual(['2031-01-01T00:00:00Z']);
    expect(next('@monthly', null, '2030-06-02T00:00:00Z', 1)).toEqual(['2030-07-01T00:00:00Z']);
    expect(next('@weekly', null, '2030-06-01T00:00:00Z', 1)).toEqual(['2030-06-02T00:00:00Z']);
    expect(next('@daily', null, '2030-06-01T10:00:00Z', 1)).toEqual(['2030-06-02T00:00:00Z']);
    expect(next('@midnight', null, '2030-06-01T10:00:00Z', 1)).toEqual(['2030-06-02T00:00:00Z']);
    expect(next('@hourly', null, '2030-06-01T10:00:00Z', 1)).toEqual(['2030-06-01T11:00:00Z']);
  });

  it('has no next run for an expression whose runs are over, and none at all for an impossible date', () => {
    expect(next('0 0 0 1 1 * 2020', null, '2030-01-01T00:00:00Z')).toEqual([]);
    expect(previous('0 0 0 1 1 * 2020', null, '2030-01-01T00:00:00Z', 2)).toEqual(['2020-01-01T00:00:00Z']);
    expect(next('0 0 30 2 *', null, '2030-01-01T00:00:00Z')).toEqual([]);
  });

  it.each([
    ['0 25 * * *', /hour: 25 is outside 0-23/],
    ['0 0 32 * *', /day of month: 32 is outside 1-31/],
    ['* * * *', /expected 5, 6 or 7 fields separated by spaces, got 4/],
    ['5/10 * * * *', /steps from "\*" or a range/],
    ['*/0 * * * *', /needs a step from 1 to 60/],
    ['0 0 10-5 * *', /the range "10-5" runs backwards/],
    ['0 0 * * MON#6', /the n of "MON#6" is 1-5 or L/],
    // Messages quote what was written, not the numbers the names stand for.
    ['0 0 * * TUE,FRI-MON', /day of week: the range "FRI-MON" runs backwards/],
    ['0 0 * JUN-JAN *', /month: the range "JUN-JAN" runs backwards/],
    ['0 0 * * SUN/2', /day of week: "SUN\/2" steps from "\*" or a range/],
    ['0 0 15L * *', /L stands alone/],
    ['0 0 1-5W * *', /W follows a single day/],
    ['0 0 * * MONDAY', /day of week: "MONDAY" is not a number, range or step/],
    ['0 0 * JAN1 *', /a name must stand alone/],
    ['@reboot', /@reboot is not supported/],
    ['@often', /unknown nickname "@often"/],
    ['2030-01-01T00:00:00', /a date or time of day is not a cron expression/],
  ])('refuses %j, saying why', (expression, why) => {
    expect(() => parseCron(expression)).toThrow(why);
    expect(() => defineSchedule({ name: 'bad', job: 'x', cron: expression })).toThrow(new RegExp(`invalid cron expression ".*": .*${why.source}`));
  });

  it.each(['0 0 30 2 *', '0 0 31 4,6,9,11 *', '0 0 0 29 2 * 2025-2027'])('refuses %j at definition: no date in any year matches it (it was stored to fire in 9999)', (expression) => {
    expect(() => defineSchedule({ name: 'never', job: 'x', cron: expression })).toThrow(`cron expression "${expression}" never fires: no date in any year matches it`);
  });

  it('finds a run years away in a zone without walking every day to it, the clock changes near it included', () => {
    // Each once walked the zone's offsets a day at a time from `from`: seconds per call, for a
    // defineSchedule (which looks from year 1) and for every start of a tick storing the slot.
    expect(next('0 0 9 15 6 * 2027', 'Europe/Paris', '0001-01-01T00:00:00Z')).toEqual(['2027-06-15T07:00:00Z']);
    expect(next('0 0 0 1 1 * 9999', 'Europe/Paris', '2026-12-07T00:00:00Z')).toEqual(['9998-12-31T23:00:00Z']);
    expect(previous('0 0 12 1 7 * 2020', 'America/New_York', '2026-12-07T00:00:00Z')).toEqual(['2020-07-01T16:00:00Z']);
    // Spring forward on 2026-03-29 (02:00 -> 03:00): a fixed 02:30 runs at 03:00; fall back on 2026-10-25: once, the first time.
    expect(next('0 30 2 29 3 * 2026', 'Europe/Paris', '2020-01-01T00:00:00Z')).toEqual(['2026-03-29T01:00:00Z']);
    expect(next('0 30 2 25 10 * 2026', 'Europe/Paris', '2020-01-01T00:00:00Z')).toEqual(['2026-10-25T00:30:00Z']);
    expect(previous('0 30 2 25 10 * 2026', 'Europe/Paris', '2030-01-01T00:00:00Z')).toEqual(['2026-10-25T00:30:00Z']);
    expect(next('0 */30 2 25 10 * 2026', 'Europe/Paris', '2020-01-01T00:00:00Z', 5)).toEqual([
      '2026-10-25T00:00:00Z',
      '2026-10-25T00:30:00Z',
      '2026-10-25T01:00:00Z',
      '2026-10-25T01:30:00Z',
    ]);
    // Looking back from between the two passes: the run is before the clocks went back (it found none).
    expect(previous('0 45 2 25 10 * 2026', 'Europe/Paris', '2026-10-25T01:10:00Z')).toEqual(['2026-10-25T00:45:00Z']);
  });

  it('stores a run past 9999-12-31 UTC (late on that day in a zone behind UTC) as never, not as a year PostgreSQL cannot read', () => {
    const spec = { cron: '0 0 23 31 12 * 9999', timezone: 'Pacific/Pago_Pago', intervalMs: null };
    expect(cronSchedule(spec.cron, spec.timezone).next(Date.parse('2026-12-07T00:00:00Z'))).toBe(Date.parse('+010000-01-01T10:00:00Z'));
    expect(firstRunAfter(spec, new Date('2026-12-07T00:00:00Z')).toISOString()).toBe('9999-12-31T00:00:00.000Z');
  });

  it('accepts one whose years are past (a deployed app must not fail at start-up once its year ends)', () => {
    expect(defineSchedule({ name: 'past', job: 'x', cron: '0 0 0 1 1 * 2020' }).cron).toBe('0 0 0 1 1 * 2020');
    // Its only date the first instant a year field can name: it was said to match no date.
    expect(defineSchedule({ name: 'past', job: 'x', cron: '0 0 0 1 1 * 1' }).cron).toBe('0 0 0 1 1 * 1');
  });

  it('refuses an unknown time zone at definition', () => {
    expect(() => defineSchedule({ name: 'tz', job: 'x', cron: '0 3 * * *', timezone: 'Mars/Olympus' })).toThrow(/unknown time zone "Mars\/Olympus"/);
  });

  it('stores a time zone given in another case as the runtime spells it, and an alias as given', () => {
    expect(defineSchedule({ name: 'tz', job: 'x', cron: '0 3 * * *', timezone: 'europe/paris' }).timezone).toBe('Europe/Paris');
    expect(defineSchedule({ name: 'tz', job: 'x', cron: '0 3 * * *', timezone: 'utc' }).timezone).toBe('UTC');
    expect(defineSchedule({ name: 'tz', job: 'x', cron: '0 3 * * *', timezone: 'Asia/Calcutta' }).timezone).toBe('Asia/Calcutta');
  });
});

describe('daylight-saving changes', () => {
  it('Europe/Paris, spring forward (02:00 -> 03:00): a fixed 02:30 runs at 03:00 that day; a 15-minute job skips the gap', () => {
    expect(next('30 2 * * *', 'Europe/Paris', '2030-03-30T12:00:00Z')).toEqual(['2030-03-31T01:00:00Z', '2030-04-01T00:30:00Z', '2030-04-02T00:30:00Z']);
    expect(next('*/15 * * * *', 'Europe/Paris', '2030-03-31T00:40:00Z', 3)).toEqual(['2030-03-31T00:45:00Z', '2030-03-31T01:00:00Z', '2030-03-31T01:15:00Z']);
    expect(previous('30 2 * * *', 'Europe/Paris', '2030-04-01T00:00:00Z', 2)).toEqual(['2030-03-31T01:00:00Z', '2030-03-30T01:30:00Z']);
  });

  it('Europe/Paris, fall back (03:00 -> 02:00): a fixed 02:30 runs once, the first time; a 15-minute job runs through both passes', () => {
    expect(next('30 2 * * *', 'Europe/Paris', '2030-10-26T12:00:00Z', 2)).toEqual(['2030-10-27T00:30:00Z', '2030-10-28T01:30:00Z']);
    expect(next('*/30 2 * * *', 'Europe/Paris', '2030-10-26T23:59:00Z', 5)).toEqual([
      '2030-10-27T00:00:00Z',
      '2030-10-27T00:30:00Z',
      '2030-10-27T01:00:00Z',
      '2030-10-27T01:30:00Z',
      '2030-10-28T01:00:00Z',
    ]);
    expect(previous('30 2 * * *', 'Europe/Paris', '2030-10-28T00:00:00Z', 2)).toEqual(['2030-10-27T00:30:00Z', '2030-10-26T00:30:00Z']);
  });

  it('America/New_York: a list of hours is not a fixed time, so 1:30 runs twice on the night clocks go back', () => {
    expect(next('30 1,13 * * *', 'America/New_York', '2030-11-03T04:00:00Z', 3)).toEqual(['2030-11-03T05:30:00Z', '2030-11-03T06:30:00Z', '2030-11-03T18:30:00Z']);
    expect(next('30 1 * * *', 'America/New_York', '2030-11-03T04:00:00Z', 2)).toEqual(['2030-11-03T05:30:00Z', '2030-11-04T06:30:00Z']);
  });

  it('Australia/Lord_Howe changes by half an hour: 02:15 is skipped in October (runs at 02:30) and 01:45 repeats in April (runs once)', () => {
    expect(next('15 2 * * *', 'Australia/Lord_Howe', '2030-10-05T12:00:00Z', 1)).toEqual(['2030-10-05T15:30:00Z']);
    expect(next('45 1 * * *', 'Australia/Lord_Howe', '2030-04-06T12:00:00Z', 2)).toEqual(['2030-04-06T14:45:00Z', '2030-04-07T15:15:00Z']);
  });

  it('Asia/Kathmandu: a quarter-hour offset, and its 1986 move from +05:30 to +05:45 skipped 00:00-00:15', () => {
    expect(next('0 9 * * *', 'Asia/Kathmandu', '2030-01-01T00:00:00Z', 1)).toEqual(['2030-01-01T03:15:00Z']);
    expect(next('10 0 * * *', 'Asia/Kathmandu', '1985-12-31T12:00:00Z', 2)).toEqual(['1985-12-31T18:30:00Z', '1986-01-01T18:25:00Z']);
    expect(next('*/5 0 * * *', 'Asia/Kathmandu', '1985-12-31T18:00:00Z', 2)).toEqual(['1985-12-31T18:30:00Z', '1985-12-31T18:35:00Z']);
  });
});
