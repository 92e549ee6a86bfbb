// The ready-backlog metric: how many jobs are due and waiting when a tick
// looks. A tick on Lambda publishes it as one CloudWatch Embedded Metric
// Format (EMF) log line, so no CloudWatch API call (and no
// cloudwatch:PutMetricData permission) is needed; the CDK construct alarms on
// the same namespace, name and dimension, which is why they live here, shared.

/** CloudWatch metric namespace of every workhorse metric. */
export const METRIC_NAMESPACE = 'Workhorse';
/** The metric: ready jobs whose run_at has passed, per workhorse namespace. */
export const READY_BACKLOG_METRIC = 'ReadyBacklog';
/** The dimension naming the workhorse namespace (a partition of the database). */
export const NAMESPACE_DIMENSION = 'WorkhorseNamespace';

/**
 * One EMF log line reporting the ready backlog of `namespace`. Write it to
 * stdout (console.log) from inside a Lambda invocation; CloudWatch Logs turns
 * it into a metric data point.
 */
export function readyBacklogEmfLine(namespace: string, backlog: number, at: Date = new Date()): string {
  return JSON.stringify({
    _aws: {
      Timestamp: at.getTime(),
      CloudWatchMetrics: [
        {
          Namespace: METRIC_NAMESPACE,
          Dimensions: [[NAMESPACE_DIMENSION]],
          Metrics: [{ Name: READY_BACKLOG_METRIC, Unit: 'Count' }],
        },
      ],
    },
    [NAMESPACE_DIMENSION]: namespace,
    [READY_BACKLOG_METRIC]: backlog,
  });
}
