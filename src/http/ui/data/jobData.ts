// What the Job view reads: the job itself through the client (as GET
// /jobs/:id answers it), its live lease, its attempts ledger and its
// recorded steps. A job of another namespace, or none, is a NotFoundError.
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import { jobAttempts, jobLease, jobSteps, type AttemptRecord, type JobLease, type StepRecord } from '../../../db/dashboard.js';
import type { JobRecord } from '../../../db/protocol.js';
import { NotFoundError } from '../../../errors.js';
import { jobIdStringSchema } from '../../../names.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

export const jobParams = z.object({ id: jobIdStringSchema });
export const jobQuery = z.object({ ...noticeQuery }).strict();

export interface JobData {
  job: JobRecord;
  lease: JobLease | null;
  attempts: AttemptRecord[];
  steps: StepRecord[];
  query: z.output<typeof jobQuery>;
  /** The server's clock when read (for relative times the protocol does not compute). */
  nowMs: number;
}

export async function loadJob(client: Client, param: Record<string, string>, query: Record<string, string | string[]>, nowMs: number): Promise<JobData> {
  const { id } = parseInput(jobParams, param, 'path');
  const q = parseInput(jobQuery, query, 'query');
  const [job, lease, attempts, steps] = await Promise.all([
    client.getJob(id),
    jobLease(client.pool, client.namespace, id),
    jobAttempts(client.pool, client.namespace, id),
    jobSteps(client.pool, client.namespace, id),
  ]);
  if (!job) throw new NotFoundError(`job ${id} not found in namespace "${client.namespace}"`);
  return { job, lease, attempts, steps, query: q, nowMs };
}
