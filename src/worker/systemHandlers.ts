// Binds the handlers of the built-in sys.* slots to a worker's handler
// registry, unless the app bound its own. Used by the tick and by the small
// system worker that fires a long-lived worker's `sys` slots. sys.outbox is
// bound only with sinks and sys.alerts only with the alerts option, so only
// the workers configured for them claim their jobs.
import type { Client } from '../client/client.js';
import { alertsHandler, alertsJob, SYS_ALERTS } from '../alerts/alertsSlot.js';
import { outboxHandler, outboxJob, SYS_OUTBOX } from '../outbox/outboxSlot.js';
import { retentionHandler, retentionJob, SYS_RETENTION } from '../schedules/retention.js';
import type { SystemSlotConfig } from '../schedules/systemSchedules.js';
import type { HandlerRegistry } from './handlerRegistry.js';
import type { BlindSpell } from './heartbeat.js';

/**
 * `blindSpell`: the last spell the runner could not see the database (a
 * long-lived worker's heartbeat knows; a tick does not), so sys.alerts does
 * not count as dead the workers whose silence it could not see.
 */
export function addSystemHandlers(handlers: HandlerRegistry, client: Client, config: SystemSlotConfig = {}, blindSpell?: () => BlindSpell | undefined): void {
  if (!handlers.types.includes(SYS_RETENTION)) handlers.addHandler(retentionJob, retentionHandler(client) as never);
  if (config.outbox && !handlers.types.includes(SYS_OUTBOX)) handlers.addHandler(outboxJob, outboxHandler(client, config.outbox) as never);
  if (config.alerts && !handlers.types.includes(SYS_ALERTS)) handlers.addHandler(alertsJob, alertsHandler(client, config.alerts, blindSpell) as never);
}
