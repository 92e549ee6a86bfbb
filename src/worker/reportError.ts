// How a worker reports a problem it carries on through: an `error` event
// when someone listens, otherwise one log line. A database fault is a line
// with its message (it is expected: the worker retries), and so is a
// statement PostgreSQL cancelled; anything unexpected is printed whole.
import type { EventEmitter } from 'node:events';
import { isQueryCanceled } from '../db/sqlState.js';
import { describeDbError, isTransientDbError } from '../db/transient.js';
import type { WorkerEvents } from './workerTypes.js';

export function reportWorkerError(events: EventEmitter<WorkerEvents>, workerId: string, err: unknown, what?: string): void {
  if (events.listenerCount('error') > 0) {
    events.emit('error', err);
    return;
  }
  const prefix = `[workhorse] worker ${workerId}:`;
  if (isTransientDbError(err) || isQueryCanceled(err)) console.error(`${prefix} ${what ?? 'database fault'}: ${describeDbError(err)}`);
  else console.error(`${prefix} ${what ?? 'error'}:`, err);
}
