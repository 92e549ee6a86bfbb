// Every queue of a namespace with its counts, the dead ones included: the
// queues list (ready, running and waiting counts, pause state, limits)
// merged with the depth read (failed and cancelled per queue). A queue whose
// jobs have all failed or been cancelled is in the depth only. One shape for
// `workhorse queues list --json` and `GET /queues`, which lacked the failed
// and cancelled counts the CLI showed.
import type { Client } from './client.js';
import type { QueueRecord } from '../db/protocol.js';
import { queueDepth } from '../db/dashboard.js';

export interface QueueListing extends QueueRecord {
  failed: number;
  cancelled: number;
}

/** The namespace's queues by name, each with its failed and cancelled counts. */
export async function listQueuesWithDead(client: Client): Promise<QueueListing[]> {
  const [queues, depth] = await Promise.all([client.admin.listQueues(), queueDepth(client.calls, client.namespace)]);
  const dead = new Map(depth.map((d) => [d.queue, d]));
  const all: QueueRecord[] = [...queues];
  for (const d of depth) {
    if (!queues.some((q) => q.name === d.queue)) {
      all.push({ name: d.queue, paused: false, concurrencyLimit: null, rateLimit: null, ratePeriodMs: 1000, ready: d.due + d.scheduled, running: 0, waiting: 0 });
    }
  }
  all.sort((a, b) => a.name.localeCompare(b.name));
  return all.map((q) => ({ ...q, failed: dead.get(q.name)?.failed ?? 0, cancelled: dead.get(q.name)?.cancelled ?? 0 }));
}
