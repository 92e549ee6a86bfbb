// What the Decisions view reads: the decisions waiting for people, oldest
// first, through the client (client.pendingDecisions, as GET /decisions
// answers them), at most DECISIONS_SHOWN; or, with `?job=<id>` (the Job
// view's link), that job's own open decisions, which past the oldest
// DECISIONS_SHOWN the list never reached.
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import type { PendingDecision } from '../../../db/protocol.js';
import { parseInput } from '../../../validation.js';
import { jobIdStringSchema } from '../../../names.js';
import { noticeQuery } from '../views/common.js';

export const DECISIONS_SHOWN = 100;

export const decisionsQuery = z.object({ ...noticeQuery, job: jobIdStringSchema.optional() }).strict();

export interface DecisionsData {
  decisions: PendingDecision[];
  query: z.output<typeof decisionsQuery>;
  nowMs: number;
}

export async function loadDecisions(client: Client, query: Record<string, string | string[]>, nowMs: number): Promise<DecisionsData> {
  const q = parseInput(decisionsQuery, query, 'query');
  if (q.job !== undefined) return { decisions: await decisionsOf(client, q.job), query: q, nowMs };
  return { decisions: await client.pendingDecisions({ limit: DECISIONS_SHOWN }), query: q, nowMs };
}

/** The open decisions of one job (none when it is not waiting, or not found). */
async function decisionsOf(client: Client, jobId: string): Promise<PendingDecision[]> {
  const job = await client.getJob(jobId);
  if (job?.status !== 'waiting') return [];
  return (job.waits ?? [])
    .filter((w) => w.kind === 'decision')
    .map((w) => ({ jobId: job.id, name: w.name, prompt: w.prompt, choices: w.choices ?? [], since: w.since, timeoutAt: w.wakeAt, queue: job.queue, type: job.type }));
}
