// Which queue names an operator may pause or resume (CLI `workhorse queues
// pause`, POST /queues/:name/pause, the dashboard's buttons): one rule for
// all three, which had each their own (the CLI took a queue whose jobs had
// all succeeded, the HTTP API refused it). A pause writes a policy row, so
// a name nothing uses is refused rather than leaving a row behind: most
// likely it is a typo. `client.admin.pauseQueue` itself pauses any name.
import { SYSTEM_QUEUE } from '../names.js';
import type { Client } from './client.js';

/**
 * Whether `name` is a queue: the built-in slots' (`sys`), the queue of a job
 * type the client defines, one with a policy row, or one holding any job,
 * finished ones included (a queue that is idle now is paused before its
 * next batch arrives).
 */
export async function isKnownQueue(client: Client, name: string): Promise<boolean> {
  if (name === SYSTEM_QUEUE) return true;
  if (client.definedTypes.some((t) => client.definition(t).queue === name)) return true;
  if ((await client.admin.listQueues()).some((q) => q.name === name)) return true;
  return (await client.admin.listJobs({ queue: name, limit: 1 })).jobs.length > 0;
}
