// What the Decisions view reads: the decisions waiting for people, oldest
// first, through the client (client.pendingDecisions, as GET /decisions
// answers them), at most DECISIONS_SHOWN.
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import type { PendingDecision } from '../../../db/protocol.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

export const DECISIONS_SHOWN = 100;

export const decisionsQuery = z.object({ ...noticeQuery }).strict();

export interface DecisionsData {
  decisions: PendingDecision[];
  query: z.output<typeof decisionsQuery>;
  nowMs: number;
}

export async function loadDecisions(client: Client, query: Record<string, string | string[]>, nowMs: number): Promise<DecisionsData> {
  const q = parseInput(decisionsQuery, query, 'query');
  return { decisions: await client.pendingDecisions({ limit: DECISIONS_SHOWN }), query: q, nowMs };
}
