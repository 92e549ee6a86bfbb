// What the Job view reads: the job itself through the client (as GET
// /jobs/:id answers it, with a waiting job's open wait), its live lease,
// its attempts ledger, its recorded steps, and its parent and children. A
// job of another namespace, or none, is a NotFoundError.
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import { jobAttempts, jobFamily, jobLease, jobSteps, type AttemptRecord, type JobFamily, type JobLease, type StepRecord } from '../../../db/dashboard.js';
import type { JobRecord } from '../../../db/protocol.js';
import { NotFoundError } from '../../../errors.js';
import { jobIdStringSchema } from '../../../names.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

export const jobParams = z.object({ id: jobIdStringSchema });
export const jobQuery = z.object({ ...noticeQuery }).strict();
/** The most children the page lists. */
export const CHILDREN_SHOWN = 100;

export interface JobData {
  job: JobRecord;
  lease: JobLease | null;
  attempts: AttemptRecord[];
  steps: StepRecord[];
  family: JobFamily;
  query: z.output<typeof jobQuery>;
  /** The server's clock when read (for relative times the protocol does not compute). */
  nowMs: number;
}

export async function loadJob(client: Client, param: Record<string, string>, query: Record<string, string | string[]>, nowMs: number): Promise<JobData> {
  const { id } = parseInput(jobParams, param, 'path');
  const q = parseInput(jobQuery, query, 'query');
  const [job, lease, attempts, steps, family] = await Promise.all([
    client.getJob(id),
    jobLease(client.calls, client.namespace, id),
    jobAttempts(client.calls, client.namespace, id),
    jobSteps(client.calls, client.namespace, id),
    jobFamily(client.calls, client.namespace, id, CHILDREN_SHOWN),
  ]);
  if (!job) throw new NotFoundError(`job ${id} not found in namespace "${client.namespace}"`);
  return { job, lease, attempts, steps, family, query: q, nowMs };
}
