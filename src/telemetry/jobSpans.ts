// The span of one job attempt: a child of the enqueueing span (the stored
// trace context), active while the handler runs (so the handler's own spans
// nest under it), ended when the settlement is written, with the outcome.
// Only made when tracing is on (telemetry.ts, tracingOn).
//
// A JobSpan is the Context the handler runs in, and it starts the SDK span
// the first time anything reads the active span from it (a child span, an
// instrumented client, an enqueue storing its trace context, a handler's
// trace.getActiveSpan()), with the attempt's start time. A handler that
// never asks gets the same span, started and ended at once when the
// attempt is over (telemetryBacklog.ts writes it while the worker waits for
// its next claim): the same name, attributes, parent and times, without the
// SDK's work between one handler and the next.
import { context, INVALID_SPAN_CONTEXT, ROOT_CONTEXT, trace, type Context } from '@opentelemetry/api';
import type { ClaimedJob } from '../db/protocol.js';
import { getTracer, SpanKind, SpanStatusCode, type Span } from './telemetry.js';
import { contextFrom } from './traceContext.js';

/**
 * The key under which the API keeps a context's span (its createContextKey
 * is Symbol.for). Checked once: if a version of the API keeps it elsewhere,
 * every JobSpan starts its span at once instead.
 */
const SPAN_KEY = Symbol.for('OpenTelemetry Context Key SPAN');
const LAZY = (() => {
  const probe = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);
  return trace.getSpan(ROOT_CONTEXT.setValue(SPAN_KEY, probe)) === probe;
})();

const spanNames = new Map<string, string>();
/** `process <type>`, built once per type. */
function spanName(type: string): string {
  let name = spanNames.get(type);
  if (name === undefined) {
    name = `process ${type}`;
    if (spanNames.size < 10_000) spanNames.set(type, name);
  }
  return name;
}

export class JobSpan implements Context {
  private readonly parent: Context;
  /** performance.now() at the attempt's start. */
  private readonly startedAt = performance.now();
  private span: Span | undefined;

  constructor(private readonly job: ClaimedJob) {
    this.parent = contextFrom(job.traceContext);
    if (!LAZY) this.started();
  }

  /** Whether the SDK span exists yet (something read it while the handler ran). */
  get isStarted(): boolean {
    return this.span !== undefined;
  }

  getValue(key: symbol): unknown {
    return key === SPAN_KEY ? this.started() : this.parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return trace.setSpan(this.parent, this.started()).setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return trace.setSpan(this.parent, this.started()).deleteValue(key);
  }

  /** Ends the span with what the attempt became, at `endedAt` (performance.now() when the settlement was written). */
  end(outcome: string, error: unknown, endedAt: number): void {
    const span = this.started();
    span.setAttribute('workhorse.job.outcome', outcome);
    if (error !== undefined && outcome !== 'succeeded') {
      if (error instanceof Error) span.recordException(error, endedAt);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
    }
    span.end(endedAt);
  }

  /** The SDK span, started at the attempt's start time the first time it is needed. */
  private started(): Span {
    const job = this.job;
    return (this.span ??= getTracer().startSpan(
      spanName(job.type),
      {
        kind: SpanKind.CONSUMER,
        startTime: this.startedAt,
        attributes: {
          'messaging.system': 'workhorse',
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'messaging.destination.name': job.queue,
          'messaging.message.id': job.id,
          'workhorse.job.type': job.type,
          'workhorse.job.attempt': job.attempt,
        },
      },
      this.parent,
    ));
  }
}

/** Runs `fn` with the job's span (a JobSpan, or any context) active. */
export function withJobSpan<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}
