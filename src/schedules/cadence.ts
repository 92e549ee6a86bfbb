// Cadence math for recurring slots: when a slot first runs, which of its
// cadences are due at a given instant (bounded by the catch-up limit), and
// when it runs next. Cron expressions go through croner; fixed intervals are
// plain arithmetic anchored on the slot's previous next_run_at, so every
// claimer computes the same cadence times and therefore the same dedupe keys.
import { Cron } from 'croner';

export interface CadenceSpec {
  cron: string | null;
  timezone: string | null;
  intervalMs: number | null;
}

/** A date PostgreSQL and JavaScript both accept, for a cron that never fires again. */
const NEVER = new Date('9999-12-31T00:00:00.000Z');

/** Builds a croner instance used for calculations only (no timer). Throws on a bad expression. */
export function cronFor(expression: string, timezone: string | null): Cron {
  return new Cron(expression, { paused: true, ...(timezone ? { timezone } : {}) });
}

/** The first cadence strictly after `from` (cron), or `from` + interval. */
export function firstRunAfter(spec: CadenceSpec, from: Date): Date {
  if (spec.intervalMs !== null) return new Date(from.getTime() + spec.intervalMs);
  return cronFor(spec.cron!, spec.timezone).nextRun(from) ?? NEVER;
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
  const cron = cronFor(spec.cron!, spec.timezone);
  // previousRuns returns the latest runs before the reference, newest first.
  // One extra so a run in the second after `now` (filtered out) costs nothing.
  const recent = cron
    .previousRuns(limit + 1, new Date(t + 1000))
    .filter((d) => d.getTime() >= start && d.getTime() <= t)
    .slice(0, limit)
    .reverse();
  // The stored next_run_at is itself a cadence; it fires even if the
  // expression changed under it.
  const due = recent.length > 0 ? recent : [nextRunAt];
  return { due, next: cron.nextRun(now) ?? NEVER };
}
