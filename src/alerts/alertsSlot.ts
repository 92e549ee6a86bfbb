// sys.alerts, the built-in slot that has the fleet watch itself. Each
// cadence enqueues a `sys.alerts` job on the `sys` queue carrying the
// resolved thresholds; its handler evaluates every rule in one statement
// (evaluate_alerts_v2: open, resolve and, when the one who fires the slot
// has outbox sinks, publish on workhorse.alert through the outbox,
// atomically) and, when metrics are on, writes one EMF line per rule with
// the number of its open alerts.
import * as z from 'zod';
import type { Client } from '../client/client.js';
import { defineJob } from '../client/defineJob.js';
import type { AlertRecord } from '../db/protocol.js';
import { openAlertsEmfLine } from '../metrics/openAlertsMetric.js';
import { defineSystemSchedule, type ScheduleDefinition } from '../schedules/defineSchedule.js';
import { SYSTEM_QUEUE, SYSTEM_SCHEDULE_NAMESPACE } from '../schedules/retention.js';
import type { ResolvedAlertsOptions } from './alertsOptions.js';

export const SYS_ALERTS = 'sys.alerts';
/** The outbox topic of alert openings and resolutions. */
export const ALERT_TOPIC = 'workhorse.alert';

// `publish`: whether the evaluation writes the alerts' openings and resolutions to the outbox, which only
// an evaluator with sinks does (without, they were kept pending for good). Absent (a slot stored before): true.
const alertsPayloadSchema = z.object({ thresholds: z.record(z.string(), z.record(z.string(), z.number())), publish: z.boolean().optional() }).strict();

export const alertsJob = defineJob({
  type: SYS_ALERTS,
  schema: alertsPayloadSchema,
  queue: SYSTEM_QUEUE,
  retry: { maxAttempts: 2, backoff: { kind: 'fixed', baseMs: 5000, maxMs: 5000 } },
});

/** The slot; `publish`: the one who fires it has outbox sinks (the alerts' changes go out through them). */
export function alertsSchedule(o: ResolvedAlertsOptions, publish: boolean): ScheduleDefinition {
  return defineSystemSchedule({
    name: SYS_ALERTS,
    job: alertsJob,
    everyMs: o.everyMs,
    scheduleNamespace: SYSTEM_SCHEDULE_NAMESPACE,
    payload: { thresholds: o.thresholds, publish },
  });
}

/** A spell the evaluator could not see the database, in ms before now (a worker's heartbeat knows it). */
export interface EvaluatorBlindSpell {
  beganMsAgo: number;
  endedMsAgo: number;
}

/**
 * Evaluates the rules once; returns the alerts that opened or resolved.
 * `blind`: the last spell the evaluator could not see the database;
 * dead_worker counts no silence from within it (after an outage every
 * worker looks silent until its next beat: each opened and resolved an alert).
 */
export async function evaluateAlerts(
  client: Client,
  thresholds: Record<string, Record<string, number>>,
  emitMetrics = false,
  publish = true,
  blind?: EvaluatorBlindSpell,
): Promise<AlertRecord[]> {
  const rules =
    blind !== undefined && thresholds.dead_worker
      ? { ...thresholds, dead_worker: { ...thresholds.dead_worker, blindBeganMsAgo: blind.beganMsAgo, blindEndedMsAgo: blind.endedMsAgo } }
      : thresholds;
  const changed = await client.protocol.evaluateAlerts(client.calls, client.namespace, rules, publish);
  if (emitMetrics) {
    const open = await client.protocol.listAlerts(client.calls, client.namespace, 'open', 1000);
    for (const rule of Object.keys(thresholds)) {
      console.log(openAlertsEmfLine(client.namespace, rule, open.filter((a) => a.rule === rule).length));
    }
  }
  return changed;
}

export function alertsHandler(client: Client, o: ResolvedAlertsOptions, blindSpell?: () => EvaluatorBlindSpell | undefined) {
  return async (payload: z.output<typeof alertsPayloadSchema>) => {
    const changed = await evaluateAlerts(client, payload.thresholds, o.emitMetrics, payload.publish ?? true, blindSpell?.());
    return { opened: changed.filter((a) => a.state === 'open').length, resolved: changed.filter((a) => a.state === 'resolved').length };
  };
}
