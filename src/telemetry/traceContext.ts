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

/**
 * The last stored context restored. Jobs enqueued together (one request's
 * enqueueMany, a fan-out) carry the same one, and a Context is immutable, so
 * they share it rather than each parsing the traceparent again.
 */
let last: { traceparent: string; tracestate: string | undefined; ctx: Context } | undefined;

/** The context whose (remote) span is the stored one; the root context when none or malformed. */
export function contextFrom(stored: StoredTraceContext | null | undefined): Context {
  if (!stored || typeof stored.traceparent !== 'string') return ROOT_CONTEXT;
  const { traceparent } = stored;
  const tracestate = typeof stored.tracestate === 'string' && stored.tracestate ? stored.tracestate : undefined;
  if (last && last.traceparent === traceparent && last.tracestate === tracestate) return last.ctx;
  const m = TRACEPARENT.exec(traceparent);
  if (!m) return ROOT_CONTEXT;
  const ctx = trace.setSpanContext(ROOT_CONTEXT, {
    traceId: m[1]!,
    spanId: m[2]!,
    traceFlags: parseInt(m[3]!, 16) & TraceFlags.SAMPLED,
    isRemote: true,
    ...(tracestate ? { traceState: createTraceState(tracestate) } : {}),
  });
  last = { traceparent, tracestate, ctx };
  return ctx;
}
