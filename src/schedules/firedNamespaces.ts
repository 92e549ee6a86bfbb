// The check a Worker and a ScheduleRunner make of the schedules they are
// given to store: each must be in a schedule namespace they fire. One
// outside them was stored (as declared) and never fired by anyone, without
// a word; a Worker refused it without naming the schedule or the namespace
// to add. Both now refuse it the same way, naming both. A tick given no
// namespaces fires its app's: theirs, besides `default` and `sys` (it used to
// fire `default` and `sys` only, and an app schedule in `reports` was stored
// and never fired).
import type * as z from 'zod';
import type { ScheduleDefinition } from './defineSchedule.js';

/** Adds an issue at `schedules.<i>.scheduleNamespace` for each schedule outside `fired`. */
export function refuseUnfiredSchedules(
  schedules: readonly ScheduleDefinition[] | undefined,
  fired: readonly string[] | undefined,
  who: string,
  ctx: z.RefinementCtx,
): void {
  (schedules ?? []).forEach((s, i) => {
    if ((fired ?? []).includes(s.scheduleNamespace)) return;
    ctx.addIssue({
      code: 'custom',
      path: ['schedules', i, 'scheduleNamespace'],
      message: `schedule "${s.name}" is in schedule namespace "${s.scheduleNamespace}", which this ${who} does not fire: add "${s.scheduleNamespace}" to scheduleNamespaces`,
    });
  });
}

/** The namespaces a tick fires when none are given: `default`, `sys`, and every one its app's schedules are in. */
export function tickScheduleNamespaces(schedules: readonly ScheduleDefinition[] | undefined): string[] {
  return [...new Set(['default', 'sys', ...(schedules ?? []).map((s) => s.scheduleNamespace)])];
}
