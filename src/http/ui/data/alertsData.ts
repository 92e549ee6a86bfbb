// What the Alerts view reads: the open alerts and the latest resolved ones,
// through the client (client.alerts, as GET /alerts answers them), and the
// sys.alerts slot, so that a namespace where nothing evaluates the rules
// does not look healthy ("No alert is open") when nobody is looking.
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import { SYS_ALERTS } from '../../../alerts/alertsSlot.js';
import type { AlertRecord, ScheduleRecord } from '../../../db/protocol.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

export const RESOLVED_SHOWN = 50;
const OPEN_SHOWN = 500;

export const alertsQuery = z.object({ ...noticeQuery }).strict();

/** Whether the rules are evaluated: the sys.alerts slot missing, disabled, overdue (3 cadences), or firing. */
export type AlertsEvaluation =
  | { state: 'none' }
  | { state: 'disabled' }
  | { state: 'overdue' | 'ok'; lastFiredAt: Date | null; everyMs: number | null };

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
  const [open, resolved, slot] = await Promise.all([
    client.alerts({ state: 'open', limit: OPEN_SHOWN }),
    client.alerts({ state: 'resolved', limit: RESOLVED_SHOWN }),
    client.protocol.getSchedule(client.calls, client.namespace, SYS_ALERTS),
  ]);
  return { evaluation: evaluationOf(slot, nowMs), open, resolved, resolvedShown: RESOLVED_SHOWN, query: q, nowMs };
}

function evaluationOf(slot: ScheduleRecord | null, nowMs: number): AlertsEvaluation {
  if (!slot) return { state: 'none' };
  if (!slot.enabled) return { state: 'disabled' };
  const since = (slot.lastFiredAt ?? slot.createdAt).getTime();
  const overdue = slot.intervalMs !== null && nowMs - since > Math.max(OVERDUE_CADENCES * slot.intervalMs, OVERDUE_FLOOR_MS);
  return { state: overdue ? 'overdue' : 'ok', lastFiredAt: slot.lastFiredAt, everyMs: slot.intervalMs };
}
