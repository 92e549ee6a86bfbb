// When a cron expression fires in an IANA time zone: the first run strictly
// after an instant and the last strictly before one, at whole seconds. The
// timeline is cut where the zone's offset changes; within a stretch of one
// offset a run is a matching wall time (cronCalendar.ts) minus that offset.
//
// Daylight-saving changes, as cron has long handled them:
// - A fixed-time job (one second, one minute and one hour, e.g. "30 2 * * *"):
//   a wall time the clocks skip (spring forward) runs once, at the end of
//   the gap (02:30 in a 02:00-03:00 gap runs at 03:00), on the same day; a
//   wall time the clocks repeat (fall back) runs once, at its first occurrence.
// - Any other job (a `*`, step, range or list among seconds, minutes and
//   hours, e.g. "*/15 * * * *"): a skipped wall time does not run, and a
//   repeated one runs at both occurrences, so runs go on through the
//   repeated hour in real time.
import { nextWallTime, previousWallTime } from './cronCalendar.js';
import { parseCron, type CronFields } from './cronFields.js';
import { changeAfter, changeBefore, zoneClock, type ZoneClock } from './zoneClock.js';

const SECOND_MS = 1000;
const DAY_MS = 86_400_000;

export interface CronSchedule {
  /** The first run strictly after `after` (ms since the epoch), or null if there is none. */
  next(after: number): number | null;
  /** The last run strictly before `before`, or null if there is none. */
  previous(before: number): number | null;
}

/** Parses `expression` and reads it in `timeZone` (UTC for null); throws ConfigError for either. */
export function cronSchedule(expression: string, timeZone: string | null): CronSchedule {
  const fields = parseCron(expression);
  const clock = zoneClock(timeZone);
  return {
    next: (after) => next(fields, clock, after),
    previous: (before) => previous(fields, clock, before),
  };
}

const sameDay = (a: number, b: number) => Math.floor(a / DAY_MS) === Math.floor(b / DAY_MS);

/**
 * A fixed-time job whose wall time falls in the gap a spring-forward change
 * at `change` leaves (offset `before` to the larger `after`) runs at `change`.
 */
function runsAtGap(f: CronFields, change: number, before: number, after: number): boolean {
  if (!f.fixedTime || after <= before) return false;
  const w = nextWallTime(f, change + before);
  return w !== null && w < change + after && sameDay(w, change + after);
}

/** Where wall time `w`, at instant `x` under offset `o`, first happened, if the clocks went back over it; else null. */
function firstOccurrence(clock: ZoneClock, x: number, w: number, o: number): number | null {
  const change = changeBefore(clock, x, x - DAY_MS);
  if (change === null) return null;
  const before = clock.offset(change - SECOND_MS);
  return before > o && w < change + before ? w - before : null;
}

/** Whether wall time `w`, at instant `x` under offset `o`, already happened earlier (clocks went back). */
function isRepeat(clock: ZoneClock, x: number, w: number, o: number): boolean {
  return firstOccurrence(clock, x, w, o) !== null;
}

/**
 * How far ahead (or back) a run may be before the search leaps to it rather
 * than walking the zone's offset changes day by day to it (a cron of one
 * year, read from year 1 or in 9999, walked millions of days: seconds).
 * Every instant more than NEAR_MS from both `t` and the run has a wall time
 * after `from` and before the run's (offsets differ by less than a day and
 * a half), where no wall time matches: so no run is skipped, provided no
 * offset change lies within NEAR_MS of `t` (the repeated or skipped wall
 * times around one are handled by the walk).
 */
const NEAR_MS = 2 * DAY_MS;

function next(f: CronFields, clock: ZoneClock, after: number): number | null {
  let t = Math.floor(after / SECOND_MS) * SECOND_MS + SECOND_MS;
  let o = clock.offset(t);
  if (!clock.constant && runsAtGap(f, t, clock.offset(t - SECOND_MS), o)) return t;
  let from = t + o;
  for (;;) {
    const w = nextWallTime(f, from);
    if (w === null) {
      // No later wall time matches, but clocks going back within the day bring earlier ones round again.
      const back = clock.constant ? null : changeAfter(clock, t, t + DAY_MS);
      if (back === null || clock.offset(back) >= o) return null;
      [t, o] = [back, clock.offset(back)];
      from = t + o;
      continue;
    }
    const x = w - o;
    if (!clock.constant && x - t > 2 * NEAR_MS && changeAfter(clock, t, t + NEAR_MS) === null) {
      return next(f, clock, x - NEAR_MS - SECOND_MS);
    }
    const change = changeAfter(clock, t, x);
    if (change === null) {
      if (!f.fixedTime || !isRepeat(clock, x, w, o)) return x;
      [t, from] = [x, w + SECOND_MS];
      continue;
    }
    const o2 = clock.offset(change);
    if (runsAtGap(f, change, o, o2)) return change;
    [t, o, from] = [change, o2, change + o2];
  }
}

function previous(f: CronFields, clock: ZoneClock, before: number): number | null {
  let t = Math.ceil(before / SECOND_MS) * SECOND_MS - SECOND_MS;
  let o = clock.offset(t);
  let from = t + o;
  for (;;) {
    const w = previousWallTime(f, from);
    if (w === null) {
      // No earlier wall time matches, but before clocks went back within the day the later ones came first.
      const back = clock.constant ? null : changeBefore(clock, t, t - DAY_MS);
      if (back === null || clock.offset(back - SECOND_MS) <= o) return null;
      [t, o] = [back - SECOND_MS, clock.offset(back - SECOND_MS)];
      from = t + o;
      continue;
    }
    const x = w - o;
    if (!clock.constant && t - x > 2 * NEAR_MS && changeBefore(clock, t, t - NEAR_MS) === null) {
      return previous(f, clock, x + NEAR_MS + SECOND_MS);
    }
    const change = changeBefore(clock, t, x);
    // A fixed-time job runs at the first occurrence of a repeated wall time: looking back from the second,
    // that is its run (it skipped to the day before, and a slot claimed past the second lost the run).
    if (change === null) return f.fixedTime ? (firstOccurrence(clock, x, w, o) ?? x) : x;
    const o1 = clock.offset(change - SECOND_MS);
    if (runsAtGap(f, change, o1, o)) return change;
    [t, o, from] = [change - SECOND_MS, o1, change - SECOND_MS + o1];
  }
}
