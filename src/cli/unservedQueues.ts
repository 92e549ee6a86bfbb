// The warning `workhorse tick` prints when a queue it was told to claim from
// (--queue or WORKHORSE_QUEUES) is none the app serves (app/appQueues.ts): a typo or the
// wrong app would otherwise run a tick that finds nothing and says nothing.
// A warning, not an error: the name is well formed, and a tick whose queues
// are empty has done its work (exit 0).
import { appQueues } from '../app/appQueues.js';
import type { WorkhorseApp } from '../app/defineApp.js';
import { SYSTEM_SCHEDULE_NAMESPACE } from '../schedules/retention.js';

/** Unset, a tick fires the default and sys schedule namespaces (src/tick/options.ts). */
const DEFAULT_SCHEDULE_NAMESPACES = [SYSTEM_SCHEDULE_NAMESPACE];

/** undefined unless one of `requested` is none of the app's queues; else the line to print. */
export function unservedQueuesWarning(
  requested: string[] | undefined,
  app: WorkhorseApp,
  scheduleNamespaces: string[] = DEFAULT_SCHEDULE_NAMESPACES,
): string | undefined {
  if (!requested) return undefined;
  const known = appQueues(app, scheduleNamespaces.includes(SYSTEM_SCHEDULE_NAMESPACE));
  const unknown = [...new Set(requested)].filter((q) => !known.includes(q));
  if (unknown.length === 0) return undefined;
  const list = (qs: string[]) => qs.map((q) => JSON.stringify(q)).join(', ');
  const which = unknown.length === 1 ? `queue ${list(unknown)} is the queue` : `queues ${list(unknown)} are the queues`;
  const uses = known.length > 0 ? `the app's jobs and schedules use ${list(known)}` : 'the app defines no job types';
  return `warning: ${which} of no job type of this app: the tick claims there only jobs enqueued with that queue given (options.queue) (${uses})`;
}
