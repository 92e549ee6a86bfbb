// Binds the handlers of the built-in sys.* slots to a worker's handler
// registry, unless the app bound its own. Used by the tick and by the small
// system worker that fires a long-lived worker's `sys` slots.
import type { Client } from '../client/client.js';
import { retentionHandler, retentionJob, SYS_RETENTION } from '../schedules/retention.js';
import type { HandlerRegistry } from './handlerRegistry.js';

export function addSystemHandlers(handlers: HandlerRegistry, client: Client): void {
  if (!handlers.types.includes(SYS_RETENTION)) handlers.addHandler(retentionJob, retentionHandler(client) as never);
}
