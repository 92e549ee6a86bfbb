// The queues an app serves: those of its job definitions, those its
// schedules enqueue into (a schedule's `options.queue`, else its job's
// queue), and `sys` when the built-in slots are fired. A tick of the app
// claims from these unless told otherwise, and `workhorse tick --queue`
// warns about a queue outside them. A schedule naming a type the app does
// not define adds nothing here (defineApp refuses such a schedule).
import { SYSTEM_QUEUE } from '../schedules/retention.js';
import type { WorkhorseApp } from './defineApp.js';

export function appQueues(app: WorkhorseApp, withSystem: boolean): string[] {
  const queues = new Set(app.jobs.map((j) => j.queue));
  for (const s of app.schedules ?? []) {
    const job = typeof s.job === 'string' ? app.jobs.find((j) => j.type === s.job) : s.job;
    const queue = s.options.queue ?? job?.queue;
    if (queue !== undefined) queues.add(queue);
  }
  if (withSystem) queues.add(SYSTEM_QUEUE);
  return [...queues];
}
