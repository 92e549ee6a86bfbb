// The telemetry a worker emits for one job attempt, with no queue around it:
// workhorse's own span and metric calls (a JobSpan made active as for the
// handler, then started and ended; the queue-lag and duration records), in a
// loop, with the providers the telemetry phase registers. Nearly all of it is
// the OpenTelemetry SDK's work. The drain's added CPU per job minus this is
// what the queue around it adds (spans living across the settlement round
// trip, the context manager's hook on every promise); this part no change
// inside workhorse can remove while a span per attempt and two records are
// emitted.
import type { ClaimedJob } from '../../src/db/protocol.js';
import { JobSpan, withJobSpan } from '../../src/telemetry/jobSpans.js';
import { attrsOf, meters } from '../../src/telemetry/telemetry.js';
import { median } from '../stats.js';

export interface SdkFloor {
  /** CPU per job of the span alone, µs (median of the loops). */
  spanUs: number;
  /** CPU per job of the two histogram records, µs. */
  recordsUs: number;
}

const LOOPS = 5;

/**
 * Measures the registered providers' cost per job over `jobs` iterations,
 * LOOPS times after one warm-up loop. `flush` (the tracer provider's
 * forceFlush) is timed with the spans: exporting them is part of their cost.
 */
export async function measureSdkFloor(jobs: number, type: string, queue: string, flush: () => Promise<void>): Promise<SdkFloor> {
  const now = new Date();
  const job: ClaimedJob = {
    id: '1', queue, type, payload: {}, priority: 0, runAt: now, attempt: 1, maxAttempts: 3, execution: 1,
    timeoutMs: null, concurrencyKey: null, progress: null, createdAt: now, leaseExpiresAt: now, traceContext: null,
  };
  const spans = (n: number) => {
    for (let i = 0; i < n; i++) {
      const span = new JobSpan(job);
      withJobSpan(span, () => i);
      span.end('succeeded', undefined, performance.now());
    }
  };
  const records = (n: number) => {
    const m = meters();
    for (let i = 0; i < n; i++) {
      m.queueLag.record(i % 5, attrsOf(type));
      m.duration.record(i % 7, attrsOf(type, 'succeeded'));
    }
  };
  const cpuPerJob = async (f: (n: number) => void) => {
    const t = process.cpuUsage();
    f(jobs);
    await flush();
    const c = process.cpuUsage(t);
    return (c.user + c.system) / jobs;
  };
  await cpuPerJob(spans);
  await cpuPerJob(records);
  const spanUs: number[] = [];
  const recordsUs: number[] = [];
  for (let i = 0; i < LOOPS; i++) {
    spanUs.push(await cpuPerJob(spans));
    recordsUs.push(await cpuPerJob(records));
  }
  return { spanUs: median(spanUs), recordsUs: median(recordsUs) };
}
