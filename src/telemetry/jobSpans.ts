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
import { errorToJson } from '../errorJson.js';

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

  /**
   * Ends the span with what the attempt became, at `endedAt` (performance.now()
   * when the settlement was written). Every outcome but succeeded and
   * suspended is an error, whatever the handler threw (a string, an object,
   * undefined): its exception is recorded with the message the job's
   * lastError carries.
   */
  end(outcome: string, error: unknown, endedAt: number): void {
    const span = this.started();
    span.setAttribute('workhorse.job.outcome', outcome);
    if (outcome !== 'succeeded' && outcome !== 'suspended') {
      const exception = exceptionOf(outcome, error);
      // An Error whose fields throw when read must not cost the span its end.
      try {
        span.recordException(exception, endedAt);
        span.setStatus({ code: SpanStatusCode.ERROR, message: typeof exception === 'string' ? exception : exception.message });
      } catch {
        span.setStatus({ code: SpanStatusCode.ERROR, message: errorToJson(exception).message });
      }
    }
    span.end(endedAt);
  }

  /**
   * The SDK span, started at the attempt's start time the first time it is
   * needed. A tracer that throws (a span processor's onStart, a sampler) gets
   * a non-recording span in the enqueuer's trace instead: the handler that
   * happened to read the active span goes on, as one that did not would.
   */
  private started(): Span {
    if (this.span) return this.span;
    const job = this.job;
    try {
      this.span = getTracer().startSpan(
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
      );
    } catch {
      this.span = trace.wrapSpanContext(trace.getSpanContext(this.parent) ?? INVALID_SPAN_CONTEXT);
    }
    return this.span;
  }
}

/** What a failed attempt records as its exception: the Error, or, for anything else thrown, the message its lastError carries. */
function exceptionOf(outcome: string, error: unknown): Error | string {
  if (error instanceof Error) return error;
  if (error === undefined) return outcome === 'unsettled' ? 'the attempt\'s outcome could not be written' : `job ${outcome}: the handler threw undefined`;
  return errorToJson(error).message;
}

/** Runs `fn` with the job's span (a JobSpan, or any context) active. */
export function withJobSpan<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}
