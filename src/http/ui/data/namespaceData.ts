// What the Namespace view reads: one page of the namespace table (never
// more: PAGE_SIZE rows, and a bounded window of the primary key for pages
// of every job), the queues (for the filter and the "queue paused" note)
// and the job types the filter suggests. Filters are checked with zod; a
// bad one is a ValidationError (400), not an empty table.
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import { dashboardJobs, type DashboardJobPage } from '../../../db/dashboard.js';
import { JOB_STATUSES, type JobStatus, type QueueRecord } from '../../../db/protocol.js';
import { jobIdStringSchema, jobTypeSchema, queueNameSchema } from '../../../names.js';
import { parseInput } from '../../../validation.js';
import { noticeQuery } from '../views/common.js';

/** Rows one page shows. */
export const PAGE_SIZE = 50;
/** Ids one page of every job (or of succeeded ones) searches below its cursor. */
export const WINDOW_IDS = 10_000;

// A filter typed into the form comes with its spaces (no queue name or job type has any): trimmed, and blank is unset.
const blankIsUnset = <T extends z.ZodType>(s: T) => z.preprocess((v) => (typeof v === 'string' ? v.trim() || undefined : v), s.optional());

export const namespaceQuery = z
  .object({
    status: blankIsUnset(z.enum(JOB_STATUSES as [JobStatus, ...JobStatus[]])),
    queue: blankIsUnset(queueNameSchema),
    type: blankIsUnset(jobTypeSchema),
    before: blankIsUnset(jobIdStringSchema),
    ...noticeQuery,
  })
  .strict();

export type NamespaceFilter = z.output<typeof namespaceQuery>;

export interface NamespaceData {
  filter: NamespaceFilter;
  page: DashboardJobPage;
  queues: QueueRecord[];
  types: string[];
}

export function parseNamespaceQuery(query: Record<string, string | string[]>): NamespaceFilter {
  return parseInput(namespaceQuery, query, 'filter');
}

export async function loadNamespace(client: Client, filter: NamespaceFilter): Promise<NamespaceData> {
  const [page, queues, workers] = await Promise.all([
    dashboardJobs(client.calls, client.namespace, {
      status: filter.status,
      queue: filter.queue,
      type: filter.type,
      beforeId: filter.before,
      limit: PAGE_SIZE,
      span: WINDOW_IDS,
    }),
    client.admin.listQueues(),
    client.admin.listWorkers(),
  ]);
  const types = new Set([...client.definedTypes, ...workers.flatMap((w) => w.types), ...page.jobs.map((j) => j.type)]);
  return { filter, page, queues, types: [...types].sort() };
}
