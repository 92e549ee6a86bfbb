// What the Alerts view reads: the open alerts and the latest resolved ones,
// through the client (client.alerts, as GET /alerts answers them), and the
// sys.alerts slot, so that a namespace where nothing evaluates the rules
// does not look healthy ("No alert is open") when nobody is looking.
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import { SYS_ALERTS } from '../../../alerts/alertsSlot.js';
import type { AlertRecord, ScheduleRecord } from '../../../db/protocol.js';
import { slotRun, type SlotRun } from '../../../db/dashboard.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

export const RESOLVED_SHOWN = 50;
const OPEN_SHOWN = 500;

export const alertsQuery = z.object({ ...noticeQuery }).strict();

/**
 * Whether the rules are evaluated: the sys.alerts slot missing, disabled,
 * overdue (3 cadences without a firing), one of its jobs due for as long
 * and not run (`stalled`: the slot fires, but nothing runs the sys queue),
 * or running. `ranAt`: when the last cadence's job finished (the rules'
 * last run), once it has.
 */
export type AlertsEvaluation =
  | { state: 'none' }
  | { state: 'disabled' }
  | { state: 'overdue' | 'ok'; lastFiredAt: Date | null; everyMs: number | null; ranAt: Date | null }
  | { state: 'stalled'; dueSince: Date; jobId: string };

/**
 * The slot counts as overdue after this many of its cadences without a
 * firing (as the slot_missed rule's default), and never before
 * OVERDUE_FLOOR_MS: a short cadence is fired at the pace of whatever fires
 * it (a worker looks for due slots every few seconds, a tick once per
 * invocation), not every cadence.
 */
const OVERDUE_CADENCES = 3;
const OVERDUE_FLOOR_MS = 180_000;

export interface AlertsData {
  evaluation: AlertsEvaluation;
  open: AlertRecord[];
  resolved: AlertRecord[];
  resolvedShown: number;
  query: z.output<typeof alertsQuery>;
  nowMs: number;
}

export async function loadAlerts(client: Client, query: Record<string, string | string[]>, nowMs: number): Promise<AlertsData> {
  const q = parseInput(alertsQuery, query, 'query');
  const [open, resolved, slot, run] = await Promise.all([
    client.alerts({ state: 'open', limit: OPEN_SHOWN }),
    client.alerts({ state: 'resolved', limit: RESOLVED_SHOWN }),
    client.protocol.getSchedule(client.calls, client.namespace, SYS_ALERTS),
    slotRun(client.calls, client.namespace, SYS_ALERTS),
  ]);
  return { evaluation: evaluationOf(slot, run, nowMs), open, resolved, resolvedShown: RESOLVED_SHOWN, query: q, nowMs };
}

function evaluationOf(slot: ScheduleRecord | null, run: SlotRun | null, nowMs: number): AlertsEvaluation {
  if (!slot) return { state: 'none' };
  if (!slot.enabled) return { state: 'disabled' };
  const late = (since: Date) => slot.intervalMs !== null && nowMs - since.getTime() > Math.max(OVERDUE_CADENCES * slot.intervalMs, OVERDUE_FLOOR_MS);
  // Fired, but a job of it due for as long as a missed slot has not run: the rules were not evaluated since
  // (the sys queue or the worker that runs it paused, or no system worker), however recently the slot fired.
  if (run?.oldestDue && late(run.oldestDue.runAt)) return { state: 'stalled', dueSince: run.oldestDue.runAt, jobId: run.oldestDue.jobId };
  const ranAt = run?.last?.status === 'succeeded' ? run.last.finishedAt : null;
  return { state: late(slot.lastFiredAt ?? slot.createdAt) ? 'overdue' : 'ok', lastFiredAt: slot.lastFiredAt, everyMs: slot.intervalMs, ranAt };
}
