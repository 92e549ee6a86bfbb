// What a long-lived worker says when it starts and can never run one of its
// handlers: a worker claims only from its `queues` (default ['default']), so
// a handler for a job type defined on another queue (defineJob's `queue:
// 'email'` with a worker left at its default) waits forever on jobs that
// stay `ready`, and a worker with no handlers claims nothing at all. Both
// were silent; each is now one line when run() starts (one per queue it does
// not claim from, naming its types: a line per type flooded the log of a
// worker with many, at every restart). A line, not an error:
// an enqueue may override the queue, so such a worker can be deliberate. A
// worker without handlers that fires schedule namespaces (one kept to
// deliver the outbox and evaluate alerts) says nothing.
import type { HandlerRegistry } from './handlerRegistry.js';

export function unclaimedHandlerLines(
  handlers: HandlerRegistry,
  queues: readonly string[],
  workerId: string,
  scheduleNamespaces: readonly string[] | undefined,
): string[] {
  const prefix = `[workhorse] worker ${workerId}:`;
  if (handlers.size === 0) {
    // One that fires schedules (the sys slots: outbox, alerts, retention) has work without handlers.
    if (scheduleNamespaces?.length) return [];
    return [`${prefix} no handlers: it claims nothing (bind job types with worker.handle() before run())`];
  }
  const unclaimed = new Map<string, string[]>();
  for (const type of handlers.types) {
    const queue = handlers.get(type)?.def?.queue;
    if (queue !== undefined && !queues.includes(queue)) unclaimed.set(queue, [...(unclaimed.get(queue) ?? []), type]);
  }
  const claimed = queues.map((q) => `"${q}"`).join(', ');
  return [...unclaimed].map(([queue, types]) => {
    const named = types.slice(0, MAX_TYPES_NAMED).map((t) => `"${t}"`).join(', ');
    const more = types.length > MAX_TYPES_NAMED ? ` and ${types.length - MAX_TYPES_NAMED} more` : '';
    const whose = types.length === 1 ? 'whose jobs go' : 'whose jobs all go';
    return `${prefix} handles ${named}${more}, ${whose} to queue "${queue}", but claims only from ${claimed}: add "${queue}" to its queues or it never runs them`;
  });
}

/** Job types one line names at most; the rest are counted. */
const MAX_TYPES_NAMED = 5;
