// The CloudWatch alarms of a workhorse deployment: for each function,
// errors (a tick that throws lost its summary, perhaps its deregister),
// throttles (the reserved concurrency, i.e. the connection budget, is too
// small for the cadence plus fan-out) and duration near the timeout (ticks
// being killed instead of finishing at their deadline); and the ready
// backlog the tick publishes, which says the fleet is not keeping up; and
// one alarm per sys.alerts rule, on the open-alerts count its evaluation
// publishes (Workhorse/OpenAlerts by namespace and rule).
import { Duration } from 'aws-cdk-lib';
import { Alarm, ComparisonOperator, Metric, TreatMissingData } from 'aws-cdk-lib/aws-cloudwatch';
import { SnsAction } from 'aws-cdk-lib/aws-cloudwatch-actions';
import type { Function as LambdaFunction } from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { ALERT_RULES } from '../src/alerts/alertRules.js';
import { OPEN_ALERTS_METRIC, RULE_DIMENSION } from '../src/metrics/openAlertsMetric.js';
import { METRIC_NAMESPACE, NAMESPACE_DIMENSION, READY_BACKLOG_METRIC } from '../src/metrics/readyBacklogMetric.js';
import type { ResolvedTickWorkerProps } from './workhorseTickWorkerProps.js';

const PERIOD = Duration.minutes(5);

export interface AlarmedFunction {
  /** Short label used in construct ids and descriptions ("Tick", "Http"). */
  label: string;
  fn: LambdaFunction;
  timeoutSeconds: number;
  /**
   * When an invocation plans to have returned, in ms from its start: a
   * tick's timeout less its safety margin, the HTTP function's less the 1 s
   * it keeps for the response. A busy tick runs until then by design.
   */
  returnsByMs: number;
}

/**
 * The duration alarm's threshold: with a durationRatio, that share of the
 * timeout; otherwise half-way between when the function plans to return and
 * its timeout, so a tick that works its whole window under a backlog (its
 * normal shape) stays quiet and one that overran its own deadline does not.
 */
export function durationThresholdMs(f: Pick<AlarmedFunction, 'timeoutSeconds' | 'returnsByMs'>, durationRatio: number | undefined): number {
  const timeoutMs = f.timeoutSeconds * 1000;
  if (durationRatio !== undefined) return Math.floor(timeoutMs * durationRatio);
  return Math.floor(f.returnsByMs + (timeoutMs - f.returnsByMs) / 2);
}

export interface WorkhorseAlarmsProps {
  functions: AlarmedFunction[];
  namespace: string;
  options: ResolvedTickWorkerProps['alarms'];
}

/** The ready-backlog metric of one workhorse namespace, as the tick publishes it. */
export function readyBacklogMetric(namespace: string): Metric {
  return new Metric({
    namespace: METRIC_NAMESPACE,
    metricName: READY_BACKLOG_METRIC,
    dimensionsMap: { [NAMESPACE_DIMENSION]: namespace },
    statistic: 'Minimum',
    period: PERIOD,
  });
}

/** The open alerts of one rule in one workhorse namespace, as sys.alerts publishes them. */
export function openAlertsMetric(namespace: string, rule: string): Metric {
  return new Metric({
    namespace: METRIC_NAMESPACE,
    metricName: OPEN_ALERTS_METRIC,
    dimensionsMap: { [NAMESPACE_DIMENSION]: namespace, [RULE_DIMENSION]: rule },
    statistic: 'Maximum',
    period: PERIOD,
  });
}

const camel = (rule: string) => rule.replace(/(^|_)([a-z])/g, (_m, _s, c: string) => c.toUpperCase());

export class WorkhorseAlarms extends Construct {
  readonly alarms: Alarm[] = [];
  private readonly action: SnsAction | undefined;

  constructor(scope: Construct, id: string, props: WorkhorseAlarmsProps) {
    super(scope, id);
    const { options } = props;
    this.action = options.topic ? new SnsAction(options.topic) : undefined;
    for (const f of props.functions) {
      const { label, fn, timeoutSeconds } = f;
      this.add(`${label}Errors`, {
        metric: fn.metricErrors({ period: PERIOD, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        description: `${label} function: invocations failed`,
      });
      this.add(`${label}Throttles`, {
        metric: fn.metricThrottles({ period: PERIOD, statistic: 'Sum' }),
        threshold: 1,
        evaluationPeriods: 1,
        description: `${label} function: invocations throttled (reserved concurrency exhausted)`,
      });
      const limitMs = durationThresholdMs(f, options.durationRatio);
      this.add(`${label}DurationNearTimeout`, {
        metric: fn.metricDuration({ period: PERIOD, statistic: 'Maximum' }),
        threshold: limitMs,
        evaluationPeriods: 1,
        description:
          options.durationRatio === undefined
            ? `${label} function: an invocation ran ${limitMs} ms or more of its ${timeoutSeconds} s timeout, past the ${f.returnsByMs} ms by which it plans to return`
            : `${label} function: an invocation ran ${limitMs} ms or more of its ${timeoutSeconds} s timeout`,
      });
    }
    this.add('ReadyBacklog', {
      metric: readyBacklogMetric(props.namespace),
      threshold: options.readyBacklogThreshold,
      evaluationPeriods: 3,
      description: `namespace ${props.namespace}: at least ${options.readyBacklogThreshold} ready jobs for 15 minutes`,
    });
    if (options.alertRules) {
      for (const rule of ALERT_RULES) {
        this.add(`Alert${camel(rule)}`, {
          metric: openAlertsMetric(props.namespace, rule),
          threshold: 1,
          evaluationPeriods: 1,
          description: `namespace ${props.namespace}: sys.alerts has an open ${rule} alert`,
        });
      }
    }
  }

  private add(id: string, p: { metric: Metric; threshold: number; evaluationPeriods: number; description: string }) {
    const alarm = new Alarm(this, id, {
      metric: p.metric,
      threshold: p.threshold,
      evaluationPeriods: p.evaluationPeriods,
      comparisonOperator: ComparisonOperator.GREATER_THAN_OR_EQUAL_TO_THRESHOLD,
      treatMissingData: TreatMissingData.NOT_BREACHING,
      alarmDescription: `workhorse: ${p.description}`,
    });
    if (this.action) alarm.addAlarmAction(this.action);
    this.alarms.push(alarm);
  }
}
