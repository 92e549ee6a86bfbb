// Cadence math for recurring slots: when a slot first runs, which of its
// cadences are due at a given instant (bounded by the catch-up limit), and
// when it runs next. Cron expressions go through cronSchedule.ts; fixed
// intervals are plain arithmetic anchored on the slot's previous
// next_run_at, so every claimer computes the same cadence times and
// therefore the same dedupe keys.
import { cronSchedule } from './cronSchedule.js';

export interface CadenceSpec {
  cron: string | null;
  timezone: string | null;
  intervalMs: number | null;
}

/** A date PostgreSQL and JavaScript both accept, for a cron that never fires again. */
const NEVER = new Date('9999-12-31T00:00:00.000Z');

/**
 * A run at or after NEVER is stored as NEVER: one in year 10000 (a run late
 * on 9999-12-31 in a zone behind UTC) is past what PostgreSQL parses from
 * JavaScript's ISO string ("+010000-01-01..."), and the slot failed to store.
 */
const at = (ms: number | null) => (ms === null || ms >= NEVER.getTime() ? NEVER : new Date(ms));

/** The first cadence strictly after `from` (cron), or `from` + interval. */
export function firstRunAfter(spec: CadenceSpec, from: Date): Date {
  if (spec.intervalMs !== null) return new Date(from.getTime() + spec.intervalMs);
  return at(cronSchedule(spec.cron!, spec.timezone).next(from.getTime()));
}

export interface DueCadences {
  /** The cadences to fire, oldest first: at most `limit`, the most recent ones. */
  due: Date[];
  /** The first cadence after `now`: the slot's new next_run_at. */
  next: Date;
}

/**
 * The cadences of a slot due at `now`, given its stored next_run_at (itself a
 * cadence). When more than `limit` have passed only the latest `limit` fire.
 */
export function dueCadences(spec: CadenceSpec, nextRunAt: Date, now: Date, limit: number): DueCadences {
  const start = nextRunAt.getTime();
  const t = now.getTime();
  if (t < start) return { due: [], next: nextRunAt };
  if (spec.intervalMs !== null) {
    const iv = spec.intervalMs;
    const last = Math.floor((t - start) / iv);
    const first = Math.max(0, last - limit + 1);
    const due: Date[] = [];
    for (let k = first; k <= last; k++) due.push(new Date(start + k * iv));
    return { due, next: new Date(start + (last + 1) * iv) };
  }
  const schedule = cronSchedule(spec.cron!, spec.timezone);
  // The latest runs at or before `now` (strictly before now + 1 ms), newest first.
  const recent: Date[] = [];
  for (let run = schedule.previous(t + 1); run !== null && run >= start && recent.length < limit; run = schedule.previous(run)) {
    recent.push(new Date(run));
  }
  // The stored next_run_at is itself a cadence; it fires even if the
  // expression changed under it.
  const due = recent.length > 0 ? recent.reverse() : [nextRunAt];
  return { due, next: at(schedule.next(t)) };
}
