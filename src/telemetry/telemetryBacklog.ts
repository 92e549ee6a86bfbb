// Telemetry written after the fact, while the worker waits. A worker runs a
// claimed batch's handlers back to back and then sends its next claim; the
// SDK's work for the batch (the histogram records, the spans' ends, and the
// starts of spans no handler asked for: jobSpans.ts) would otherwise run
// between one handler and the next. Here it waits until the next claim is on
// its way (flushWhileClaiming) and runs during the claim's round trip,
// when the process would be idle. Nothing is sampled or dropped: every value
// and time is taken at its moment and written as it was. A timer writes what
// is pending within FLUSH_LATEST_MS when no claim comes (handlers that run
// long, a quiet queue), a backlog past MAX_PENDING is written at once, and a
// tick (before it returns) and a stopping worker write the rest.
import type { Attributes, Histogram } from '@opentelemetry/api';
import type { JobSpan } from './jobSpans.js';

/** The longest a record or a span end waits for a claim to ride along. */
const FLUSH_LATEST_MS = 100;
/** Pending entries past which they are written at once. */
const MAX_PENDING = 20_000;

const histograms: Histogram[] = [];
const values: number[] = [];
const attributes: Attributes[] = [];

const spans: JobSpan[] = [];
const outcomes: string[] = [];
const errors: unknown[] = [];
const endTimes: number[] = [];

let timer: NodeJS.Timeout | undefined;
let immediate: NodeJS.Immediate | undefined;

/** Records `value` on `histogram` soon. */
export function recordLater(histogram: Histogram, value: number, attrs: Attributes): void {
  histograms.push(histogram);
  values.push(value);
  attributes.push(attrs);
  pending();
}

/** Ends `span` soon, with `outcome`, at `endedAt` (performance.now() when the attempt ended). */
export function endSpanLater(span: JobSpan, outcome: string, error: unknown, endedAt: number): void {
  spans.push(span);
  outcomes.push(outcome);
  errors.push(error);
  endTimes.push(endedAt);
  pending();
}

/** A claim was sent: write what is pending once this turn of the event loop is over, during its round trip. */
export function flushWhileClaiming(): void {
  if (histograms.length + spans.length > 0) immediate ??= setImmediate(flushTelemetry);
}

/**
 * Writes everything pending now. An SDK part that throws (a span processor
 * of the application's) loses that one entry, as it would have failed that
 * one call, and never the worker.
 */
export function flushTelemetry(): void {
  if (timer) clearTimeout(timer);
  if (immediate) clearImmediate(immediate);
  timer = immediate = undefined;
  const n = histograms.length;
  for (let i = 0; i < n; i++) {
    try {
      histograms[i]!.record(values[i]!, attributes[i]);
    } catch {
      // The SDK's or a view's fault, not the job's.
    }
  }
  histograms.length = values.length = attributes.length = 0;
  const m = spans.length;
  for (let i = 0; i < m; i++) {
    try {
      spans[i]!.end(outcomes[i]!, errors[i], endTimes[i]!);
    } catch {
      // As above.
    }
  }
  spans.length = outcomes.length = errors.length = endTimes.length = 0;
}

function pending(): void {
  if (histograms.length + spans.length >= MAX_PENDING) flushTelemetry();
  else timer ??= setTimeout(flushTelemetry, FLUSH_LATEST_MS);
}
