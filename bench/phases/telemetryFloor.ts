// The OpenTelemetry SDK's own cost per job, with no queue around it: what a
// worker emits for one job attempt (the `process <type>` span with the same
// kind and attributes, made active for the handler, given its outcome and
// ended; the duration and queue-lag histogram records), in a loop, with the
// providers the telemetry phase registers. The drain's added CPU per job
// minus this is what workhorse itself spends on telemetry; this part no
// change inside workhorse can remove while a span per attempt and two
// records are emitted.
import { context, metrics, ROOT_CONTEXT, SpanKind, trace } from '@opentelemetry/api';
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
  const tracer = trace.getTracer('workhorse-floor');
  const meter = metrics.getMeter('workhorse-floor');
  const duration = meter.createHistogram('floor.duration', { unit: 'ms' });
  const lag = meter.createHistogram('floor.queue_lag', { unit: 'ms' });
  const attrs = { 'workhorse.job.type': type };
  const name = `process ${type}`;
  const spans = (n: number) => {
    for (let i = 0; i < n; i++) {
      const span = tracer.startSpan(
        name,
        {
          kind: SpanKind.CONSUMER,
          attributes: {
            'messaging.system': 'workhorse',
            'messaging.operation.type': 'process',
            'messaging.operation.name': 'process',
            'messaging.destination.name': queue,
            'messaging.message.id': String(i),
            'workhorse.job.type': type,
            'workhorse.job.attempt': 1,
          },
        },
        ROOT_CONTEXT,
      );
      context.with(trace.setSpan(ROOT_CONTEXT, span), () => i);
      span.setAttribute('workhorse.job.outcome', 'succeeded');
      span.end();
    }
  };
  const records = (n: number) => {
    for (let i = 0; i < n; i++) {
      duration.record(i % 7, attrs);
      lag.record(i % 5, attrs);
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
