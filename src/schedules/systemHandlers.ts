// Binds the handlers of the built-in sys.* slots to a worker that claims the
// `sys` queue, unless the app bound its own. Used by the tick and by the
// schedule runner's small system worker.
import type { Client } from '../client/client.js';
import type { Worker } from '../worker/worker.js';
import { retentionHandler, retentionJob, SYS_RETENTION } from './retention.js';

export function addSystemHandlers(worker: Worker, client: Client): void {
  if (!worker.types.includes(SYS_RETENTION)) worker.handle(retentionJob, retentionHandler(client));
}
