// The built-in sys.* slots one who fires the `sys` namespace stores at
// start: sys.retention always, sys.outbox when sinks are configured and
// sys.alerts when alerts are.
import { alertsSchedule } from '../alerts/alertsSlot.js';
import type { ResolvedAlertsOptions } from '../alerts/alertsOptions.js';
import type { LifecycleEvent } from '../db/protocol/outbox.js';
import type { ResolvedOutboxOptions } from '../outbox/outboxOptions.js';
import { outboxSchedule } from '../outbox/outboxSlot.js';
import type { ScheduleDefinition } from './defineSchedule.js';
import { retentionSchedule, type RetentionOptions } from './retention.js';

/** The configuration of the sys.* slots that the one who fires them carries. */
export interface SystemSlotConfig {
  /** Delivery: present only with sinks. */
  outbox?: ResolvedOutboxOptions | undefined;
  /** The job lifecycle events to store for the namespace at start (absent: leave the stored choice). */
  lifecycle?: LifecycleEvent[] | undefined;
  alerts?: ResolvedAlertsOptions | undefined;
}

export function systemSchedules(retention: RetentionOptions, c: SystemSlotConfig): ScheduleDefinition[] {
  // Alerts publish their changes only where sinks deliver them (c.outbox is present only with sinks).
  return [retentionSchedule(retention), ...(c.outbox ? [outboxSchedule(c.outbox)] : []), ...(c.alerts ? [alertsSchedule(c.alerts, c.outbox !== undefined)] : [])];
}
