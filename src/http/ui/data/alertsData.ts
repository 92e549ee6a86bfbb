// What the Alerts view reads: the open alerts and the latest resolved ones,
// through the client (client.alerts, as GET /alerts answers them).
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import type { AlertRecord } from '../../../db/protocol.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

export const RESOLVED_SHOWN = 50;
const OPEN_SHOWN = 500;

export const alertsQuery = z.object({ ...noticeQuery }).strict();

export interface AlertsData {
  open: AlertRecord[];
  resolved: AlertRecord[];
  resolvedShown: number;
  query: z.output<typeof alertsQuery>;
  nowMs: number;
}

export async function loadAlerts(client: Client, query: Record<string, string | string[]>, nowMs: number): Promise<AlertsData> {
  const q = parseInput(alertsQuery, query, 'query');
  const [open, resolved] = await Promise.all([client.alerts({ state: 'open', limit: OPEN_SHOWN }), client.alerts({ state: 'resolved', limit: RESOLVED_SHOWN })]);
  return { open, resolved, resolvedShown: RESOLVED_SHOWN, query: q, nowMs };
}
