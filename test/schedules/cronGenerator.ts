// Random cron expressions and reference instants for the differential test
// against croner: a seeded generator (the same cases on every run) that
// writes every form the syntax allows, and now and then one it forbids.

/** A small seeded PRNG (mulberry32), so a failing case can be replayed. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Rand = () => number;
const int = (r: Rand, lo: number, hi: number) => lo + Math.floor(r() * (hi - lo + 1));
const pick = <T>(r: Rand, xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;

interface FieldSpec {
  min: number;
  max: number;
  names?: readonly string[];
  /** How often the field is a plain `*`. */
  star: number;
}
const MONTHS = ['JAN', 'feb', 'Mar', 'APR', 'may', 'JUN', 'jul', 'AUG', 'sep', 'OCT', 'nov', 'DEC'];
const DAYS = ['SUN', 'mon', 'Tue', 'WED', 'thu', 'FRI', 'sat'];
const SEC: FieldSpec = { min: 0, max: 59, star: 0.5 };
const MIN: FieldSpec = { min: 0, max: 59, star: 0.35 };
const HOUR: FieldSpec = { min: 0, max: 23, star: 0.35 };
const DOM: FieldSpec = { min: 1, max: 31, star: 0.5 };
const MON: FieldSpec = { min: 1, max: 12, names: MONTHS, star: 0.6 };
const DOW: FieldSpec = { min: 0, max: 7, names: DAYS, star: 0.5 };
const YEAR: FieldSpec = { min: 2020, max: 2040, star: 0.85 };

/** A value, sometimes a name, rarely out of range. */
function value(r: Rand, f: FieldSpec, bad: boolean): string {
  if (bad && r() < 0.5) return String(pick(r, [f.min - 1, f.max + 1, f.max + 7]));
  if (f.names && r() < 0.35) return pick(r, f.names);
  return String(int(r, f.min, f.max));
}

function item(r: Rand, f: FieldSpec, bad: boolean): string {
  const kind = r();
  const span = f.max - f.min + 1;
  if (kind < 0.35) return value(r, f, bad);
  if (kind < 0.55) {
    let a = int(r, f.min, f.max);
    let b = int(r, f.min, f.max);
    if (a > b && !(bad && r() < 0.5)) [a, b] = [b, a];
    return f.names && r() < 0.3 ? `${f.names[(a - f.min) % f.names.length]}-${f.names[(b - f.min) % f.names.length]}` : `${a}-${b}`;
  }
  if (kind < 0.75) return `*/${bad && r() < 0.3 ? pick(r, [0, span + 1]) : int(r, 1, Math.min(span, 20))}`;
  if (kind < 0.9) {
    const a = int(r, f.min, f.max);
    const b = int(r, a, f.max);
    return `${a}-${b}/${int(r, 1, Math.min(span, 15))}`;
  }
  if (kind < 0.95) return r() < 0.5 ? '?' : '*';
  // Forms croner refuses: a numeric step prefix, a bare step, an empty item, a stray letter.
  return bad ? pick(r, [`${int(r, f.min, f.max)}/5`, '/5', '', 'x', '1-', '-1', '1--2', '1-2-3']) : value(r, f, false);
}

function field(r: Rand, f: FieldSpec, bad: boolean): string {
  if (r() < f.star) return r() < 0.9 ? '*' : '?';
  const n = r() < 0.7 ? 1 : int(r, 2, 3);
  return Array.from({ length: n }, () => item(r, f, bad)).join(',');
}

function dayOfMonth(r: Rand, bad: boolean): string {
  const k = r();
  if (k < 0.08) return pick(r, ['L', 'l', 'LW', 'lw']);
  if (k < 0.16) return `${int(r, 1, 31)}W`;
  if (k < 0.2) return pick(r, [`L,${int(r, 1, 28)}`, `${int(r, 1, 28)},L`, `L,${int(r, 1, 31)}W`]);
  if (k < 0.22 && bad) return pick(r, ['L-5', '15L', 'LW,3', 'W', '1-5W', '*/2W', '0W', '32W', 'L,']);
  return field(r, DOM, bad);
}

function dayOfWeek(r: Rand, bad: boolean): string {
  const k = r();
  const day = () => (r() < 0.4 ? pick(r, DAYS) : String(int(r, 0, 7)));
  let text: string;
  if (k < 0.1) text = `${day()}#${int(r, 1, 5)}`;
  else if (k < 0.15) text = `${day()}#L`;
  else if (k < 0.2) text = `${day()}L`;
  else if (k < 0.23) text = `${int(r, 0, 3)}-${int(r, 4, 7)}#${int(r, 1, 4)}`;
  else if (k < 0.25 && bad) text = pick(r, ['#2', 'L', '*#2', `${day()}#0`, `${day()}#6`, '1#2#3', 'MONDAY', '1#', '*L']);
  else text = field(r, DOW, bad);
  return r() < 0.08 ? `+${text}` : text;
}

const NICKNAMES = ['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly', '@DAILY', ' @hourly '];

/** Local hours a zone's clock changes in (skipped or repeated), where the daylight-saving rules show. */
const CHANGE_HOURS: Record<string, number[]> = {
  'Europe/Paris': [1, 2, 3],
  'America/New_York': [0, 1, 2, 3],
  'Australia/Lord_Howe': [1, 2],
  'Asia/Kathmandu': [0, 23],
  UTC: [0, 23],
};

/** Hours and minutes aimed at the changes of `zone`: fixed times inside them, or runs through them. */
function changeTime(r: Rand, zone: string): [string, string] {
  const hours = CHANGE_HOURS[zone]!;
  const hour = r() < 0.6 ? String(pick(r, hours)) : pick(r, [hours.join(','), `${hours[0]}-${hours.at(-1)}`, '*']);
  const minute = r() < 0.6 ? String(int(r, 0, 59)) : pick(r, ['*/15', '*/7', '0,30', '10-50/20', '*']);
  return [minute, hour];
}

/**
 * One expression; `badRate` is how often a field may come out malformed.
 * With a zone, a third of them aim their hours at that zone's changes.
 */
export function cronExpression(r: Rand, zone?: string, badRate = 0.08): string {
  if (r() < 0.04) return pick(r, NICKNAMES);
  const bad = () => r() < badRate;
  const [minute, hour] = zone && r() < 0.35 ? changeTime(r, zone) : [field(r, MIN, bad()), field(r, HOUR, bad())];
  const fields = [minute, hour, dayOfMonth(r, bad()), field(r, MON, bad()), dayOfWeek(r, bad())];
  const count = r();
  if (count < 0.35) fields.unshift(field(r, SEC, bad()));
  else if (count < 0.45) fields.unshift(field(r, SEC, bad())), fields.push(field(r, YEAR, bad()));
  return fields.join(' ');
}

/** Daylight-saving changes (and Kathmandu's move to +05:45) the reference instants cluster around. */
export const CHANGES: Record<string, string[]> = {
  'Europe/Paris': ['2024-03-31T01:00:00Z', '2024-10-27T01:00:00Z', '2025-03-30T01:00:00Z', '2025-10-26T01:00:00Z'],
  'America/New_York': ['2024-03-10T07:00:00Z', '2024-11-03T06:00:00Z', '2025-03-09T07:00:00Z', '2025-11-02T06:00:00Z'],
  'Australia/Lord_Howe': ['2024-04-06T15:00:00Z', '2024-10-05T15:30:00Z', '2025-04-05T15:00:00Z', '2025-10-04T15:30:00Z'],
  'Asia/Kathmandu': ['1985-12-31T18:30:00Z'],
  UTC: ['2024-02-29T00:00:00Z', '2024-12-31T23:59:59Z'],
};
export const ZONES = Object.keys(CHANGES);

/** A reference instant: most near a change in `zone` (within a day and a half), the rest anywhere in 1995-2045. */
export function referenceInstant(r: Rand, zone: string): number {
  const ms = r() < 0.3 ? int(r, 0, 999) : 0;
  if (r() < 0.65) {
    const change = Date.parse(pick(r, CHANGES[zone]!));
    // Whole minutes or seconds near the change, to land on runs and on the change itself.
    const delta = r() < 0.5 ? int(r, -36 * 60, 36 * 60) * 60_000 : int(r, -7200, 7200) * 1000;
    return change + delta + ms;
  }
  return Date.UTC(1995, 0, 1) + Math.floor(r() * 50 * 365.25 * 86_400) * 1000 + ms;
}
