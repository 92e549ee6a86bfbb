// A time zone's offset from UTC at an instant, and the instants where it
// changes, read through Intl.DateTimeFormat: the runtime's own time-zone
// data, so workhorse ships none. Offsets are assumed to change at most once
// within a day, which every IANA zone's daylight-saving rules satisfy.
import { ConfigError } from '../errors.js';
import { wallTime } from './cronCalendar.js';

const DAY_MS = 86_400_000;

export interface ZoneClock {
  /** The wall time minus the instant, in ms, at a whole-second instant. */
  offset(instant: number): number;
  /** True when the offset never changes (UTC): there is nothing to search for. */
  readonly constant: boolean;
}

const UTC: ZoneClock = { offset: () => 0, constant: true };
const clocks = new Map<string, ZoneClock>();

/** The clock of an IANA time zone, UTC for null; throws ConfigError for a name the runtime does not know. */
export function zoneClock(timeZone: string | null): ZoneClock {
  if (timeZone === null) return UTC;
  let clock = clocks.get(timeZone);
  if (clock) return clock;
  let format: Intl.DateTimeFormat;
  try {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
  } catch {
    throw new ConfigError(`unknown time zone "${timeZone}" (use an IANA name such as "Europe/Paris")`);
  }
  const offset = (instant: number): number => {
    // en-US numeric: "M/D/YYYY, HH:MM:SS"
    const [month, day, year, h, m, s] = (format.format(instant).match(/\d+/g) ?? []).map(Number);
    if (s === undefined) throw new Error(`cannot read the wall time in ${timeZone} from "${format.format(instant)}"`);
    return wallTime(year!, month!, day!, ((h! * 60 + m!) * 60 + s) * 1000) - instant;
  };
  clock = { offset, constant: format.resolvedOptions().timeZone === 'UTC' };
  clocks.set(timeZone, clock);
  return clock;
}

/** The first whole second in (lo, hi] whose offset differs from lo's, given exactly one change there. */
function bisect(clock: ZoneClock, lo: number, hi: number): number {
  const at = clock.offset(lo);
  while (hi - lo > 1000) {
    const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
    if (clock.offset(mid) === at) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** The first instant in (from, to] whose offset differs from the one at `from`, or null. */
export function changeAfter(clock: ZoneClock, from: number, to: number): number | null {
  if (clock.constant) return null;
  const at = clock.offset(from);
  for (let lo = from; lo < to; lo += DAY_MS) {
    const hi = Math.min(lo + DAY_MS, to);
    if (clock.offset(hi) !== at) return bisect(clock, lo, hi);
  }
  return null;
}

/**
 * Where the offset in force at `from` began, if after `to`: the instant in
 * (to, from] at which it changed to it, or null if it holds on [to, from].
 */
export function changeBefore(clock: ZoneClock, from: number, to: number): number | null {
  if (clock.constant) return null;
  const at = clock.offset(from);
  for (let hi = from; hi > to; hi -= DAY_MS) {
    const lo = Math.max(hi - DAY_MS, to);
    if (clock.offset(lo) !== at) return bisect(clock, lo, hi);
  }
  return null;
}

/**
 * A zone name as the runtime spells it, when the given one differs only in
 * case ('europe/paris' is 'Europe/Paris'): the runtime takes either, and a
 * stored slot, a list and the dashboard show the one spelling. An alias
 * ('Asia/Calcutta') is kept as given. Call it on a name zoneClock accepts.
 */
export function zoneName(timeZone: string): string {
  const spelled = new Intl.DateTimeFormat('en-US', { timeZone }).resolvedOptions().timeZone;
  return spelled.toLowerCase() === timeZone.toLowerCase() ? spelled : timeZone;
}
