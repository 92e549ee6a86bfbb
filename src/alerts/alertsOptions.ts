// The `alerts` option of defineApp and of a Worker that fires the `sys`
// slots: the sys.alerts cadence and per-rule threshold overrides. Parsed
// once; the resolved thresholds travel in each sys.alerts job's payload.
import * as z from 'zod';
import { parseConfig } from '../validation.js';
import { resolveThresholds, thresholdsSchema, type ResolvedThresholds } from './alertRules.js';

export const alertsOptionsSchema = z
  .object({
    /** How often the rules are evaluated. */
    everyMs: z.number().int().min(1000).max(86_400_000).default(60_000),
    /** Threshold overrides per rule; `false` turns a rule off. */
    rules: thresholdsSchema,
    /** Write one CloudWatch EMF line per rule after each evaluation (default: when running on Lambda). */
    emitMetrics: z.boolean().optional(),
  })
  .strict();

export type AlertsOptions = z.input<typeof alertsOptionsSchema>;

export interface ResolvedAlertsOptions {
  everyMs: number;
  thresholds: ResolvedThresholds;
  emitMetrics: boolean;
}

export function parseAlertsOptions(o: AlertsOptions, what = 'alerts options', emitMetricsByDefault = false): ResolvedAlertsOptions {
  return resolveAlertsOptions(parseConfig(alertsOptionsSchema, o, what), emitMetricsByDefault);
}

/**
 * From the parsed option (e.g. inside the worker's options). Without
 * `emitMetrics`, metrics are written when the caller says so by default: a
 * tick on Lambda (its environment, parsed once in tick/env.ts), never a
 * long-lived worker.
 */
export function resolveAlertsOptions(p: z.output<typeof alertsOptionsSchema>, emitMetricsByDefault = false): ResolvedAlertsOptions {
  return { everyMs: p.everyMs, thresholds: resolveThresholds(p.rules), emitMetrics: p.emitMetrics ?? emitMetricsByDefault };
}
