// What the Workers, Queues and Schedules views read. Workers: the registry
// (admin.listWorkers) with each worker's heartbeat age on the database
// clock and the leases it holds. Queues: their policy and counts
// (admin.listQueues), depth by status with the oldest due job's age, and
// the last hour's throughput and backlog per minute. Schedules: the
// recurring slots (the schedules API).
import * as z from 'zod';
import type { Client } from '../../../client/client.js';
import { backlog, queueDepth, throughput, workerAges, type BacklogPoint, type QueueDepth, type ThroughputPoint, type WorkerAge } from '../../../db/dashboard.js';
import type { QueueRecord, WorkerRecord } from '../../../db/protocol.js';
import { Schedules, type ScheduleRecord } from '../../../schedules/schedules.js';
import { parseInput } from '../../../validation.js';
import { SYSTEM_QUEUE } from '../../../names.js';
import { noticeQuery } from '../views/common.js';

/** The charts' span. */
export const CHART_MINUTES = 60;

export const fleetQuery = z.object({ ...noticeQuery }).strict();
export type FleetQuery = z.output<typeof fleetQuery>;

export function parseFleetQuery(query: Record<string, string | string[]>): FleetQuery {
  return parseInput(fleetQuery, query, 'query');
}

export interface WorkersData {
  workers: WorkerRecord[];
  ages: Map<string, WorkerAge>;
  query: FleetQuery;
}

export async function loadWorkers(client: Client, query: FleetQuery): Promise<WorkersData> {
  const [workers, ages] = await Promise.all([client.admin.listWorkers(), workerAges(client.calls, client.namespace)]);
  return { workers, ages: new Map(ages.map((a) => [a.id, a])), query };
}

export interface QueuesData {
  queues: QueueRecord[];
  /**
   * The queues POST /queues/:name/pause accepts (client/knownQueue.ts), and
   * so the dashboard's buttons: those listQueues lists, those of the app's
   * job types, and `sys` when the page shows it (its slot jobs all
   * succeeded: it had no button). A queue whose jobs have all finished
   * shows, without a button.
   */
  pausable: Set<string>;
  depth: Map<string, QueueDepth>;
  throughput: ThroughputPoint[];
  backlog: BacklogPoint[];
  query: FleetQuery;
}

export async function loadQueues(client: Client, query: FleetQuery): Promise<QueuesData> {
  const [queues, depth, tp, bl] = await Promise.all([
    client.admin.listQueues(),
    queueDepth(client.calls, client.namespace),
    throughput(client.calls, client.namespace, CHART_MINUTES),
    backlog(client.calls, client.namespace, CHART_MINUTES),
  ]);
  const shown = new Set([...depth.map((x) => x.queue), ...tp.map((p) => p.queue), ...bl.map((p) => p.queue)]);
  const pausable = new Set([
    ...queues.map((q) => q.name),
    ...client.definedTypes.map((t) => client.definition(t).queue),
    ...(shown.has(SYSTEM_QUEUE) ? [SYSTEM_QUEUE] : []),
  ]);
  return { queues, pausable, depth: new Map(depth.map((x) => [x.queue, x])), throughput: tp, backlog: bl, query };
}

export interface SchedulesData {
  schedules: ScheduleRecord[];
  nowMs: number;
  query: FleetQuery;
}

export async function loadSchedules(client: Client, query: FleetQuery, nowMs: number): Promise<SchedulesData> {
  return { schedules: await new Schedules(client).list(), nowMs, query };
}
