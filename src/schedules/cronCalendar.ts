// Which wall-clock times a cron expression's fields match, on the plain
// Gregorian calendar with no time zone: the next matching time at or after
// a given one, and the last at or before it. A wall time is held as the
// milliseconds Date.UTC gives its fields. cronSchedule.ts maps these times
// onto instants in a time zone; the day rules (both day fields, L, LW, nW,
// day#n) live here.
import { ANY_OCCURRENCE, type CronFields } from './cronFields.js';

const SECOND_MS = 1000;
const MINUTE_MS = 60 * SECOND_MS;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
/** The Gregorian calendar repeats every 400 years: a day pattern that matches nothing in that span never will. */
const CYCLE_YEARS = 400;
const LAST_YEAR = 9999;

/** Date.UTC for years 1-9999 (Date.UTC reads 0-99 as 1900-1999), plus `ms` into the day. */
export function wallTime(year: number, month: number, day: number, ms = 0): number {
  const t = Date.UTC(year, month - 1, day) + ms;
  return year >= 100 ? t : new Date(t).setUTCFullYear(year);
}

const isLeap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
const weekday = (year: number, month: number, day: number) => new Date(wallTime(year, month, day)).getUTCDay();
const has = (mask: number, bit: number) => ((mask >>> bit) & 1) === 1;

export function daysInMonth(year: number, month: number): number {
  return month === 2 ? (isLeap(year) ? 29 : 28) : [31, 0, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]!;
}

/** The weekday (Monday-Friday) nearest day n of the month, never leaving it; null if the month is shorter. */
function nearestWeekday(year: number, month: number, n: number, last: number): number | null {
  if (n > last) return null;
  const w = weekday(year, month, n);
  if (w === 6) return n === 1 ? 3 : n - 1;
  if (w === 0) return n === last ? n - 2 : n + 1;
  return n;
}

function lastWeekday(year: number, month: number, last: number): number {
  const w = weekday(year, month, last);
  return w === 6 ? last - 1 : w === 0 ? last - 2 : last;
}

/** Whether a date matches the day fields: either of them (the default), both (`+`), or the one that is not `*`. */
export function dayMatches(f: CronFields, year: number, month: number, day: number): boolean {
  const last = daysInMonth(year, month);
  const byMonthDay =
    has(f.daysOfMonth, day) ||
    (f.lastDayOfMonth && day === last) ||
    (f.lastWeekdayOfMonth && day === lastWeekday(year, month, last)) ||
    f.nearestWeekdays.some((n) => nearestWeekday(year, month, n, last) === day);
  if (f.anyWeekday) return byMonthDay;
  const mask = f.weekdays[weekday(year, month, day)] ?? 0;
  const occurrence = Math.floor((day - 1) / 7);
  const byWeekday = mask === ANY_OCCURRENCE || has(mask, occurrence) || (has(mask, 5) && day + 7 > last);
  if (f.bothDays || f.anyDayOfMonth) return byMonthDay && byWeekday;
  return byMonthDay || byWeekday;
}

/** The matching time of day (ms) at or after `ms` (forward) or at or before it, or null. */
function timeOfDay(f: CronFields, ms: number, forward: boolean): number | null {
  const want = [Math.floor(ms / HOUR_MS), Math.floor(ms / MINUTE_MS) % 60, Math.floor(ms / SECOND_MS) % 60];
  const lists = [f.hours, f.minutes, f.seconds];
  const units = [HOUR_MS, MINUTE_MS, SECOND_MS];
  // Hours, then minutes, then seconds: while every value picked so far is the
  // wanted one, the next level starts at its wanted value; after that, at its first.
  const pick = (level: number, exact: boolean): number | null => {
    const list = lists[level]!;
    for (const v of forward ? list : [...list].reverse()) {
      if (exact && (forward ? v < want[level]! : v > want[level]!)) continue;
      const rest = level === 2 ? 0 : pick(level + 1, exact && v === want[level]);
      if (rest !== null) return v * units[level]! + rest;
    }
    return null;
  };
  return pick(0, true);
}

/** The first matching wall time at or after `from` (whole seconds), or null. */
export function nextWallTime(f: CronFields, from: number): number | null {
  return search(f, from, true);
}

/** The last matching wall time at or before `from` (whole seconds), or null. */
export function previousWallTime(f: CronFields, from: number): number | null {
  return search(f, from, false);
}

function search(f: CronFields, from: number, forward: boolean): number | null {
  const start = new Date(from);
  let [year, month, day] = [start.getUTCFullYear(), start.getUTCMonth() + 1, start.getUTCDate()];
  let ms: number | null = from - wallTime(year, month, day);
  const step = forward ? 1 : -1;
  const bound = f.years === null ? year + step * CYCLE_YEARS : forward ? LAST_YEAR : 1;
  const inRange = (y: number) => (forward ? y <= bound : y >= bound) && y >= 1 && y <= LAST_YEAR;
  const years = f.years === null ? null : new Set(f.years);
  while (inRange(year)) {
    if (f.years !== null && !years!.has(year)) {
      const y = forward ? f.years.find((v) => v > year) : f.years.findLast((v) => v < year);
      if (y === undefined) return null;
      [year, month, day, ms] = forward ? [y, 1, 1, null] : [y, 12, 31, null];
      continue;
    }
    if (has(f.months, month)) {
      const last = daysInMonth(year, month);
      if (day > last) [day, ms] = [last, null];
      for (; day >= 1 && day <= last; day += step, ms = null) {
        if (!dayMatches(f, year, month, day)) continue;
        const t = timeOfDay(f, ms ?? (forward ? 0 : DAY_MS - SECOND_MS), forward);
        if (t !== null) return wallTime(year, month, day, t);
      }
    }
    month += step;
    if (month === 13 || month === 0) [year, month] = [year + step, forward ? 1 : 12];
    [day, ms] = [forward ? 1 : 31, null];
  }
  return null;
}
