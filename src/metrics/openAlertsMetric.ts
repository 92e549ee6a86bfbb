// The open-alerts metric: after each sys.alerts evaluation, how many alerts
// of each rule are open, one CloudWatch Embedded Metric Format line per rule
// (no CloudWatch API call needed). The CDK construct alarms on each rule's
// series, which is why the names live here, shared.
import { METRIC_NAMESPACE, NAMESPACE_DIMENSION } from './readyBacklogMetric.js';

export const OPEN_ALERTS_METRIC = 'OpenAlerts';
/** The dimension naming the alert rule. */
export const RULE_DIMENSION = 'Rule';

export function openAlertsEmfLine(namespace: string, rule: string, open: number, at: Date = new Date()): string {
  return JSON.stringify({
    _aws: {
      Timestamp: at.getTime(),
      CloudWatchMetrics: [{ Namespace: METRIC_NAMESPACE, Dimensions: [[NAMESPACE_DIMENSION, RULE_DIMENSION]], Metrics: [{ Name: OPEN_ALERTS_METRIC, Unit: 'Count' }] }],
    },
    [NAMESPACE_DIMENSION]: namespace,
    [RULE_DIMENSION]: rule,
    [OPEN_ALERTS_METRIC]: open,
  });
}
