// Turns the last hour's rows (throughput per minute and outcome, backlog per
// minute) into what the browser's chart script draws for one queue: a value
// for every minute, zeros included, oldest first, plus the words the
// caption and the data table say for readers who cannot see the chart.
import type { AttemptOutcome, BacklogPoint, ThroughputPoint } from '../../../db/dashboard.js';

/** The outcomes a throughput bar stacks, bottom first (orphaned counts with recovered, released with cancelled). */
export const STACKED = ['succeeded', 'failed', 'retried', 'recovered', 'cancelled'] as const;
type Stacked = (typeof STACKED)[number];

const STACK_OF: Record<AttemptOutcome, Stacked> = {
  succeeded: 'succeeded',
  failed: 'failed',
  retried: 'retried',
  recovered: 'recovered',
  orphaned: 'recovered',
  cancelled: 'cancelled',
  released: 'cancelled',
};

export interface BarChart {
  kind: 'bars';
  labels: string[];
  series: { name: Stacked; values: number[] }[];
}

export interface LineChart {
  kind: 'line';
  labels: string[];
  values: number[];
}

/** The start of each of the last `minutes` minutes, ending with the one `now` is in. */
export function minuteLabels(now: Date, minutes: number): string[] {
  const last = Math.floor(now.getTime() / 60_000) * 60_000;
  return Array.from({ length: minutes }, (_, i) => new Date(last - (minutes - 1 - i) * 60_000).toISOString());
}

export function throughputChart(points: readonly ThroughputPoint[], queue: string, labels: string[]): BarChart {
  const index = new Map(labels.map((l, i) => [l, i]));
  const series = STACKED.map((name) => ({ name, values: labels.map(() => 0) }));
  for (const p of points) {
    if (p.queue !== queue) continue;
    const i = index.get(p.minute.toISOString());
    if (i === undefined) continue;
    series[STACKED.indexOf(STACK_OF[p.outcome])]!.values[i]! += p.attempts;
  }
  return { kind: 'bars', labels, series: series.filter((s) => s.values.some((v) => v > 0)) };
}

/** The backlog at the end of each minute, labelled like the throughput bars by the minute's start. */
export function backlogChart(points: readonly BacklogPoint[], queue: string, labels: string[]): LineChart {
  const mine = points.filter((p) => p.queue === queue).slice(-labels.length);
  return { kind: 'line', labels: labels.slice(labels.length - mine.length), values: mine.map((p) => p.outstanding) };
}

export function totalOf(c: BarChart): number {
  return c.series.reduce((s, x) => s + x.values.reduce((a, b) => a + b, 0), 0);
}
