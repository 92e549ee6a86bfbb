// The ready-backlog metric is a contract between the tick (which logs it as
// CloudWatch Embedded Metric Format) and the construct (which alarms on it).
import { describe, expect, it } from 'vitest';
import { readyBacklogMetric } from '../../infra/workhorseAlarms.js';
import { readyBacklogEmfLine } from '../../src/metrics/readyBacklogMetric.js';

describe('ready-backlog metric', () => {
  it('is logged as one EMF line CloudWatch turns into Workhorse/ReadyBacklog for the namespace', () => {
    const at = new Date('2026-11-29T12:00:00Z');
    const line = readyBacklogEmfLine('billing', 1234, at);
    expect(line).not.toContain('\n');
    const doc = JSON.parse(line);
    expect(doc._aws).toEqual({
      Timestamp: at.getTime(),
      CloudWatchMetrics: [
        { Namespace: 'Workhorse', Dimensions: [['WorkhorseNamespace']], Metrics: [{ Name: 'ReadyBacklog', Unit: 'Count' }] },
      ],
    });
    expect(doc.WorkhorseNamespace).toBe('billing');
    expect(doc.ReadyBacklog).toBe(1234);
  });

  it('is the metric the backlog alarm watches', () => {
    const doc = JSON.parse(readyBacklogEmfLine('billing', 1));
    const m = readyBacklogMetric('billing');
    const directive = doc._aws.CloudWatchMetrics[0];
    expect(m.namespace).toBe(directive.Namespace);
    expect(m.metricName).toBe(directive.Metrics[0].Name);
    expect(m.dimensions).toEqual({ [directive.Dimensions[0][0]]: 'billing' });
  });
});
