// The span of one job attempt: started when its handler starts, as a child
// of the enqueueing span (the stored trace context), active while the
// handler runs (so the handler's own spans nest under it), and ended when
// the settlement is written, with the outcome. Only called when tracing is
// on (telemetry.ts, tracingOn).
import { context, trace, type Context } from '@opentelemetry/api';
import type { ClaimedJob } from '../db/protocol.js';
import { getTracer, SpanKind, SpanStatusCode, type Span } from './telemetry.js';
import { contextFrom } from './traceContext.js';

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

export function startJobSpan(job: ClaimedJob): { span: Span; ctx: Context } {
  const parent = contextFrom(job.traceContext);
  const span = getTracer().startSpan(
    spanName(job.type),
    {
      kind: SpanKind.CONSUMER,
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
    parent,
  );
  return { span, ctx: trace.setSpan(parent, span) };
}

/** Runs `fn` with the job's span active. */
export function withJobSpan<T>(ctx: Context, fn: () => T): T {
  return context.with(ctx, fn);
}

export function endJobSpan(span: Span, outcome: string, error?: unknown): void {
  span.setAttribute('workhorse.job.outcome', outcome);
  if (error !== undefined && outcome !== 'succeeded') {
    if (error instanceof Error) span.recordException(error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  }
  span.end();
}
