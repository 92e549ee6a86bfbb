// Spans and metrics through the OpenTelemetry API alone: the application
// registers (or not) a tracer and meter provider; without one, nothing is
// emitted and the hot path pays one provider check per call site: no span
// objects, no attributes, no histogram records. The tracer and the
// instruments are taken again only when the global provider changes (the
// metrics API has no proxy, so a meter taken before the app registers its
// provider would stay a no-op). Attribute objects are built once per
// (type, outcome) and reused.
//
// Spans: `process <type>` per job attempt (kind CONSUMER, messaging
// semantic conventions: messaging.system, messaging.operation.*, messaging.
// destination.name = queue, messaging.message.id = job id; plus
// workhorse.job.type, .attempt, .outcome), child of the enqueueing span
// (traceContext.ts); `workhorse.tick` per tick.
// Metrics: workhorse.jobs.claimed (counter, per claim batch),
// workhorse.jobs.settled (counter, by type and outcome), workhorse.job.duration
// and workhorse.job.queue_lag (histograms, ms: handler run time; start minus
// run_at), workhorse.tick.time_left (histogram, ms).
import {
  createNoopMeter,
  metrics,
  ProxyTracerProvider,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Counter,
  type Histogram,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';

export const INSTRUMENTATION_NAME = 'workhorse';

/** The API's no-op provider: what a proxy with no delegate hands out. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether a tracer provider is registered (checked once per batch or tick, not per job). */
export function tracingOn(): boolean {
  const p = trace.getTracerProvider();
  return (p instanceof ProxyTracerProvider ? p.getDelegate() : p) !== NOOP_TRACER_PROVIDER;
}

let tracer: { provider: TracerProvider; tracer: Tracer } | undefined;

/** The workhorse tracer of the provider registered now (taken again only when the global provider changes). */
export function getTracer(): Tracer {
  const provider = trace.getTracerProvider();
  if (tracer?.provider !== provider) tracer = { provider, tracer: provider.getTracer(INSTRUMENTATION_NAME) };
  return tracer.tracer;
}

interface Instruments {
  provider: MeterProvider;
  /** False while the provider is the API's no-op one (nothing registered): the per-job records are skipped. */
  on: boolean;
  claimed: Counter;
  settled: Counter;
  duration: Histogram;
  queueLag: Histogram;
  tickTimeLeft: Histogram;
}

let instruments: Instruments | undefined;

export function meters(): Instruments {
  const provider = metrics.getMeterProvider();
  if (instruments?.provider === provider) return instruments;
  const m = provider.getMeter(INSTRUMENTATION_NAME);
  instruments = {
    provider,
    on: m !== createNoopMeter(),
    claimed: m.createCounter('workhorse.jobs.claimed', { unit: '{job}', description: 'Jobs claimed' }),
    settled: m.createCounter('workhorse.jobs.settled', { unit: '{job}', description: 'Jobs settled, by type and outcome' }),
    duration: m.createHistogram('workhorse.job.duration', { unit: 'ms', description: 'Handler run time of one attempt' }),
    queueLag: m.createHistogram('workhorse.job.queue_lag', { unit: 'ms', description: 'Start of an attempt minus the job run_at' }),
    tickTimeLeft: m.createHistogram('workhorse.tick.time_left', { unit: 'ms', description: 'Time left before the deadline when a tick returns' }),
  };
  return instruments;
}

interface TypeAttrs {
  type: Attributes;
  byOutcome: Map<string, Attributes>;
}
const typeAttrs = new Map<string, TypeAttrs>();
/** { workhorse.job.type, workhorse.job.outcome? }, built once and reused (two map lookups, no key string built per call). */
export function attrsOf(type: string, outcome?: string): Attributes {
  let t = typeAttrs.get(type);
  if (!t) {
    t = { type: { 'workhorse.job.type': type }, byOutcome: new Map() };
    if (typeAttrs.size < 10_000) typeAttrs.set(type, t);
  }
  if (outcome === undefined) return t.type;
  let a = t.byOutcome.get(outcome);
  if (!a) {
    a = { 'workhorse.job.type': type, 'workhorse.job.outcome': outcome };
    t.byOutcome.set(outcome, a);
  }
  return a;
}

export { SpanKind, SpanStatusCode, type Span };
