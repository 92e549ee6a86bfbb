// How a worker reports a problem it carries on through: an `error` event
// when someone listens, otherwise a log line (src/carriedOn.ts: one line
// for what it expects and retries, a bug printed whole).
import type { EventEmitter } from 'node:events';
import { logCarriedOn } from '../carriedOn.js';
import type { WorkerEvents } from './workerTypes.js';

export function reportWorkerError(events: EventEmitter<WorkerEvents>, workerId: string, err: unknown, what?: string): void {
  if (events.listenerCount('error') > 0) {
    events.emit('error', err);
    return;
  }
  logCarriedOn(`[workhorse] worker ${workerId}:`, err, what);
}
