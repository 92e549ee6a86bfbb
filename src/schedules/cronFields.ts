// Reads a cron expression into the values each of its fields allows. The
// syntax is the one schedules have always accepted (it grew up with croner,
// whose rules it keeps): 5 fields (minute to day of week), 6 (seconds
// first) or 7 (a year last); `*` and `?` for any value; lists, ranges and
// `*/step` or `a-b/step` steps; month and weekday names; `L` (last day of
// the month, or with a weekday its last occurrence), `LW` (last weekday of
// the month), `nW` (the weekday nearest day n), `day#n` (the nth such
// weekday), a leading `+` on the day of week to require both day fields;
// and the @yearly, @annually, @monthly, @weekly, @daily, @midnight and
// @hourly nicknames. Times are computed from these sets in cronSchedule.ts.
import { ConfigError } from '../errors.js';

export interface CronFields {
  /** Allowed values, ascending. */
  readonly seconds: readonly number[];
  readonly minutes: readonly number[];
  readonly hours: readonly number[];
  /** Bit d set: day of month d (1-31) is allowed. */
  readonly daysOfMonth: number;
  /** Bit m set: month m (1-12) is allowed. */
  readonly months: number;
  /** Allowed years, ascending; null for every year. */
  readonly years: readonly number[] | null;
  /** `L` in the day of month: its last day. */
  readonly lastDayOfMonth: boolean;
  /** `LW`: the month's last weekday (Monday to Friday). */
  readonly lastWeekdayOfMonth: boolean;
  /** The n of each `nW`: the weekday nearest day n, within the month. */
  readonly nearestWeekdays: readonly number[];
  /**
   * One mask per weekday (0 = Sunday): which of its occurrences in a month
   * match (bits 0-4: the 1st to the 5th, bit 5: the last); 0 for none.
   */
  readonly weekdays: readonly number[];
  /** The day of month field is `*`: only the day of week decides. */
  readonly anyDayOfMonth: boolean;
  /** The day of week field is `*`: only the day of month decides. */
  readonly anyWeekday: boolean;
  /** `+` before the day of week: a day must match both fields, not either. */
  readonly bothDays: boolean;
  /**
   * One second, one minute and one hour, none written with `*` or a step:
   * the daylight-saving rules for fixed-time jobs apply (cronSchedule.ts).
   */
  readonly fixedTime: boolean;
}

export const ANY_OCCURRENCE = 0b111111;
const LAST_OCCURRENCE = 0b100000;

const NICKNAMES: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

// A field's values: `first` is where `*` and a step from `*` start, `span` the largest step.
interface Domain {
  name: string;
  min: number;
  max: number;
  first: number;
  span: number;
}
const SECOND: Domain = { name: 'second', min: 0, max: 59, first: 0, span: 60 };
const MINUTE: Domain = { name: 'minute', min: 0, max: 59, first: 0, span: 60 };
const HOUR: Domain = { name: 'hour', min: 0, max: 23, first: 0, span: 24 };
const DAY: Domain = { name: 'day of month', min: 1, max: 31, first: 1, span: 31 };
const MONTH: Domain = { name: 'month', min: 1, max: 12, first: 1, span: 12 };
// 7 is Sunday too; `*` and `*/step` run over 0-6.
const WEEKDAY: Domain = { name: 'day of week', min: 0, max: 7, first: 0, span: 7 };
const YEAR: Domain = { name: 'year', min: 1, max: 9999, first: 0, span: 10000 };

function fail(message: string): never {
  throw new ConfigError(message);
}

const isNumber = (s: string) => /^\d+$/.test(s);

// The values one list item of a field allows (`*`, `n`, `a-b`, a step from `*`
// or from a range), added to `into`. `shown` is the item as written (with
// its month or weekday names), which the messages quote.
function addItem(item: string, d: Domain, into: Set<number>, shown = item): void {
  const add = (v: number) => {
    if (v < d.min || v > d.max) fail(`${d.name}: ${v} is outside ${d.min}-${d.max}`);
    into.add(d === WEEKDAY && v === 7 ? 0 : v);
  };
  const stepOf = (s: string | undefined) => {
    const step = s !== undefined && isNumber(s) ? Number(s) : NaN;
    if (!(step >= 1 && step <= d.span)) fail(`${d.name}: "${shown}" needs a step from 1 to ${d.span}`);
    return step;
  };
  if (item === '*') {
    for (let v = Math.max(d.first, d.min); v < d.first + d.span && v <= d.max; v++) add(v);
    return;
  }
  const slash = item.indexOf('/');
  if (slash >= 0 && !item.includes('-')) {
    if (item.slice(0, slash) !== '*') fail(`${d.name}: "${shown}" steps from "*" or a range (*/step, a-b/step)`);
    const step = stepOf(item.slice(slash + 1));
    for (let v = d.first; v < d.first + d.span; v += step) if (v >= d.min && v <= d.max) add(v);
    return;
  }
  const range = /^(\d+)-(\d+)(?:\/(\d+))?$/.exec(item);
  if (range) {
    const [from, to] = [Number(range[1]), Number(range[2])];
    if (from > to) fail(`${d.name}: the range "${shown}" runs backwards`);
    const step = range[3] === undefined ? 1 : stepOf(range[3]);
    for (let v = from; v <= to; v += step) add(v);
    return;
  }
  if (!isNumber(item)) fail(`${d.name}: "${shown}" is not a number, range or step`);
  add(Number(item));
}

function valuesOf(field: string, d: Domain, written = field): number[] {
  const values = new Set<number>();
  const writtenItems = written.split(',');
  for (const [i, item] of field.split(',').entries()) {
    if (item === '') fail(`${d.name}: an empty value in "${written}"`);
    addItem(item, d, values, writtenItems[i] ?? item);
  }
  return [...values].sort((a, b) => a - b);
}

const maskOf = (values: number[]) => values.reduce((m, v) => m | (1 << v), 0);

/**
 * Month or weekday names to numbers. A name stands alone: no digit, `/` or
 * `#` before it, no digit after it; a weekday name may carry the `L` suffix,
 * and Sunday ending a range is 7 (MON-SUN is Monday to Sunday).
 */
function replaceNames(field: string, names: string[], d: Domain): string {
  return field.replace(/[a-z]+/gi, (run, at: number) => {
    const lower = run.toLowerCase();
    const last = d === WEEKDAY && lower.length === 4 && lower.endsWith('l');
    const index = names.indexOf(last ? lower.slice(0, 3) : lower);
    if (index < 0) return run;
    if (/[\d/#]/.test(field.charAt(at - 1)) || /\d/.test(field.charAt(at + run.length))) {
      fail(`${d.name}: a name must stand alone in "${field}"`);
    }
    const value = d === MONTH ? index + 1 : index === 0 && field.charAt(at - 1) === '-' ? 7 : index;
    return `${value}${last ? 'L' : ''}`;
  });
}

/** The day of month: its values, plus `L`, `LW` and `nW`. */
function dayOfMonth(field: string) {
  const upper = field.toUpperCase();
  if (upper === 'LW') return { days: 0, last: false, lastWeekday: true, nearest: [], any: false };
  const items = field.split(',');
  let last = false;
  if (upper.includes('L')) {
    if (items.length > 1 && items.some((i) => i.toUpperCase() === 'LW')) fail(`day of month: LW cannot be in a list ("${field}")`);
    if (items.some((i) => i === '' || (i.toUpperCase() !== 'L' && /l/i.test(i)))) fail(`day of month: L stands alone ("${field}")`);
    last = true;
  }
  const rest = items.filter((i) => i.toUpperCase() !== 'L');
  const nearest: number[] = [];
  const plain: string[] = [];
  for (const item of rest) {
    const w = /^(\d+)W$/i.exec(item);
    if (w) {
      const n = Number(w[1]);
      if (n < 1 || n > 31) fail(`day of month: ${n} is outside 1-31 in "${item}"`);
      nearest.push(n);
    } else if (/w/i.test(item)) fail(`day of month: W follows a single day ("15W"), not "${item}"`);
    else plain.push(item);
  }
  const days = plain.length > 0 ? maskOf(valuesOf(plain.join(','), DAY)) : 0;
  return { days, last, lastWeekday: false, nearest, any: rest.join(',') === '*' };
}

/**
 * The day of week: a mask of occurrences per weekday, from `d`, `d#n`, `dL`
 * and their ranges and steps. `written` is the field as the user wrote it
 * (names, not their numbers), which the messages quote item by item.
 */
function dayOfWeek(field: string, written: string): number[] {
  const masks = [0, 0, 0, 0, 0, 0, 0];
  const writtenItems = written.split(',');
  for (const [i, item] of field.split(',').entries()) {
    const shown = writtenItems[i] ?? item;
    let base = item;
    let occurrence = ANY_OCCURRENCE;
    const hash = item.split('#');
    if (hash.length > 2 || hash[1] === '') fail(`day of week: "${shown}" is not day#n`);
    if (hash.length === 2) {
      base = hash[0]!;
      const n = hash[1]!;
      if (/^l$/i.test(n)) occurrence = LAST_OCCURRENCE;
      else if (isNumber(n) && Number(n) >= 1 && Number(n) <= 5) occurrence = 1 << (Number(n) - 1);
      else fail(`day of week: the n of "${shown}" is 1-5 or L`);
    } else if (/l$/i.test(item)) {
      base = item.slice(0, -1);
      occurrence = LAST_OCCURRENCE;
    }
    if (occurrence !== ANY_OCCURRENCE && (base === '*' || base === '')) fail(`day of week: "${shown}" needs a weekday before # or L`);
    const shownBase = hash.length === 2 ? shown.split('#')[0]! : occurrence === LAST_OCCURRENCE ? shown.slice(0, -1) : shown;
    for (const day of valuesOf(base, WEEKDAY, shownBase)) masks[day] = masks[day]! | occurrence;
  }
  return masks;
}

/** Parses an expression; throws ConfigError saying what is wrong. */
export function parseCron(expression: string): CronFields {
  let text = expression.trim();
  if (text.includes('@')) {
    const lower = text.toLowerCase();
    if (lower === '@reboot') fail('@reboot is not supported: a schedule fires at times, not at start-up');
    text = NICKNAMES[lower] ?? fail(`unknown nickname "${text}" (use @yearly, @annually, @monthly, @weekly, @daily, @midnight or @hourly)`);
  }
  if (text.includes(':')) fail('a date or time of day is not a cron expression: write the fields, e.g. "0 30 9 * * *" for 09:30:00');
  const fields = text === '' ? [] : text.split(/\s+/);
  if (fields.length < 5 || fields.length > 7) fail(`expected 5, 6 or 7 fields separated by spaces, got ${fields.length}`);
  if (fields.length === 5) fields.unshift('0');
  if (fields.length === 6) fields.push('*');
  const [sec, min, hour, dom, month, dowField, year] = fields.map((f) => f.replaceAll('?', '*')) as [string, string, string, string, string, string, string];
  for (const [f, d] of [[sec, SECOND], [min, MINUTE], [hour, HOUR], [year, YEAR]] as const) {
    if (/[a-z#]/i.test(f)) fail(`${d.name}: "${f}" may hold only digits, "*", ",", "-" and "/"`);
  }
  const both = dowField.startsWith('+');
  const dowWritten = both ? dowField.slice(1) : dowField;
  const dow = replaceNames(dowWritten, WEEKDAYS, WEEKDAY);
  if (dow === '') fail('day of week: nothing after "+"');
  const days = dayOfMonth(dom);
  const [seconds, minutes, hours] = [valuesOf(sec, SECOND), valuesOf(min, MINUTE), valuesOf(hour, HOUR)];
  const fixed = (f: string, values: number[]) => !/[*/]/.test(f) && values.length === 1;
  // Every year: null, but the other items of the list must still be valid.
  const yearItems = year.split(',').filter((i) => i !== '*');
  const anyYear = yearItems.length < year.split(',').length;
  const years = yearItems.length > 0 || !anyYear ? valuesOf(yearItems.join(','), YEAR) : [];
  return {
    seconds,
    minutes,
    hours,
    daysOfMonth: days.days,
    months: maskOf(valuesOf(replaceNames(month, MONTHS, MONTH), MONTH, month)),
    years: anyYear ? null : years,
    lastDayOfMonth: days.last,
    lastWeekdayOfMonth: days.lastWeekday,
    nearestWeekdays: days.nearest,
    weekdays: dayOfWeek(dow, dowWritten),
    anyDayOfMonth: days.any,
    anyWeekday: dow === '*',
    bothDays: both,
    fixedTime: fixed(sec, seconds) && fixed(min, minutes) && fixed(hour, hours),
  };
}
