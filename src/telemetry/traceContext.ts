// The trace context a job carries from the span that enqueued it to the
// span that runs it: the W3C `traceparent` (and `tracestate`) of the active
// span at enqueue, stored in jobs.trace_context and restored at claim as the
// remote parent of the job's span. Computed straight from the span context,
// so no propagator needs to be registered.
import { context, ROOT_CONTEXT, trace, TraceFlags, createTraceState, isSpanContextValid, type Context } from '@opentelemetry/api';

export interface StoredTraceContext {
  traceparent: string;
  tracestate?: string;
}

const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

/** The active span's context, or undefined when there is no valid one (no provider, no span). */
export function currentTraceContext(): StoredTraceContext | undefined {
  const sc = trace.getSpanContext(context.active());
  if (!sc || !isSpanContextValid(sc)) return undefined;
  const flags = (sc.traceFlags & 0xff).toString(16).padStart(2, '0');
  const out: StoredTraceContext = { traceparent: `00-${sc.traceId}-${sc.spanId}-${flags}` };
  const state = sc.traceState?.serialize();
  if (state) out.tracestate = state;
  return out;
}

/** The context whose (remote) span is the stored one; the root context when none or malformed. */
export function contextFrom(stored: StoredTraceContext | null | undefined): Context {
  const m = stored && typeof stored.traceparent === 'string' ? TRACEPARENT.exec(stored.traceparent) : null;
  if (!m) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(stored!.tracestate ? { traceState: createTraceState(stored!.tracestate) } : {}),
  });
}
