// Which queue names an operator may pause or resume (CLI `workhorse queues
// pause`, POST /queues/:name/pause, the dashboard's buttons): one rule for
// all three. A pause writes a policy row, so a name nothing uses is refused
// rather than leaving a row behind: most likely it is a typo.
// `client.admin.pauseQueue` itself pauses any name. A queue whose jobs have
// all finished does not count: telling it from a typo would walk the whole
// jobs table (no index holds finished jobs by queue), and a typo then took
// as long as the table is large.
import { SYSTEM_QUEUE } from '../names.js';
import type { Client } from './client.js';

/**
 * Whether `name` is a queue: the built-in slots' (`sys`), the queue of a job
 * type the client defines, or one listQueues lists (it holds ready, running
 * or waiting jobs, or has a policy row).
 */
export async function isKnownQueue(client: Client, name: string): Promise<boolean> {
  if (name === SYSTEM_QUEUE) return true;
  if (client.definedTypes.some((t) => client.definition(t).queue === name)) return true;
  return (await client.admin.listQueues()).some((q) => q.name === name);
}
