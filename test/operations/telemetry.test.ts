// OpenTelemetry through the API alone, asserted with the SDK's in-memory
// exporters: without a registered provider nothing is recorded (and no
// trace context is stored); with one, a job's span is the child of the span
// that enqueued it, the handler's spans nest under it, failures carry the
// error, a tick has its span, and the counters and histograms are recorded;
// consecutive jobs with different parents each get their own. A span no
// handler reads is started late (jobSpans.ts) with the attempt's own times.
import { context, createTraceState, metrics, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { AggregationTemporality, MeterProvider, MetricReader, type ResourceMetrics } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import type { ClaimedJob } from '../../src/db/protocol.js';
import { JobSpan, withJobSpan } from '../../src/telemetry/jobSpans.js';
import { tracingOn } from '../../src/telemetry/telemetry.js';
import { contextFrom } from '../../src/telemetry/traceContext.js';
import { runTick } from '../../src/tick/runTick.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

class TestReader extends MetricReader {
  constructor() {
    super({ aggregationTemporalitySelector: () => AggregationTemporality.CUMULATIVE });
  }
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const Ok = defineJob({ type: 't.ok', schema: z.object({ n: z.number() }) });
const Bad = defineJob({ type: 't.bad', schema: z.object({}), retry: { maxAttempts: 1 } });
const Nap = defineJob({ type: 't.nap', schema: z.object({}) });
const Spawner = defineJob({ type: 't.spawner', schema: z.object({}) });
const Flaky = defineJob({ type: 't.flaky', schema: z.object({}), retry: { maxAttempts: 2, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } } });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url, jobs: [Ok, Bad, Nap, Flaky, Spawner] });
});
afterAll(async () => {
  trace.disable();
  metrics.disable();
  context.disable();
  await client.close();
  await db.drop();
});

async function drain(ids: string[], opts: { concurrency?: number; prefetch?: number } = {}): Promise<void> {
  const worker = new Worker(client, { pollMs: 50, ...opts });
  worker.handle(Ok, async (p) => trace.getTracer('app').startActiveSpan('inner', (s) => (s.end(), p.n * 2)));
  worker.handle(Bad, async () => {
    throw new Error('nope');
  });
  const run = worker.run();
  await waitFor(
    async () => (await db.pool.query("select count(*)::int n from workhorse.jobs where id = any($1::bigint[]) and status in ('succeeded','failed')", [ids])).rows[0].n,
    (n) => n === ids.length,
    { what: 'the jobs to settle' },
  );
  await worker.stop();
  await run;
}

describe('without a registered provider', () => {
  it('records nothing and stores no trace context', async () => {
    expect(tracingOn()).toBe(false);
    const { id } = await trace.getTracer('app').startActiveSpan('outer', async (s) => {
      const r = await client.enqueue(Ok, { n: 1 });
      s.end();
      return r;
    });
    await drain([id]);
    const row = await db.pool.query('select trace_context, status from workhorse.jobs where id = $1', [id]);
    expect(row.rows[0]).toEqual({ trace_context: null, status: 'succeeded' });
  });
});

describe('with a tracer and a meter provider', () => {
  const spans = new InMemorySpanExporter();
  const reader = new TestReader();

  beforeAll(() => {
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
  });

  const byName = (name: string): ReadableSpan[] => spans.getFinishedSpans().filter((s) => s.name === name);
  const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

  it('makes each attempt a child span of the enqueueing span, with the messaging attributes and the outcome', async () => {
    expect(tracingOn()).toBe(true);
    const { ok, bad, outer } = await trace.getTracer('app').startActiveSpan('http.request', async (s) => {
      const ok = await client.enqueue(Ok, { n: 21 });
      const bad = await client.enqueue(Bad, {});
      s.end();
      return { ok, bad, outer: s.spanContext() };
    });
    const stored = await db.pool.query<{ trace_context: { traceparent: string } }>('select trace_context from workhorse.jobs where id = $1', [ok.id]);
    expect(stored.rows[0]!.trace_context.traceparent).toBe(`00-${outer.traceId}-${outer.spanId}-01`);
    await drain([ok.id, bad.id]);

    const [okSpan] = byName('process t.ok');
    expect(okSpan).toBeDefined();
    expect(okSpan!.spanContext().traceId).toBe(outer.traceId);
    expect(parentOf(okSpan!)).toBe(outer.spanId);
    expect(okSpan!.attributes).toMatchObject({
      'messaging.system': 'workhorse',
      'messaging.operation.type': 'process',
      'messaging.destination.name': 'default',
      'messaging.message.id': ok.id,
      'workhorse.job.type': 't.ok',
      'workhorse.job.attempt': 1,
      'workhorse.job.outcome': 'succeeded',
    });
    // The handler's own span nests under the job's.
    const [inner] = byName('inner');
    expect(parentOf(inner!)).toBe(okSpan!.spanContext().spanId);

    const [badSpan] = byName('process t.bad');
    expect(badSpan!.attributes['workhorse.job.outcome']).toBe('failed');
    expect(badSpan!.status).toMatchObject({ code: 2, message: 'nope' });
    expect(badSpan!.events.map((e) => e.name)).toContain('exception');
    expect(parentOf(badSpan!)).toBe(outer.spanId);
  });

  it('parents each attempt on its own enqueueing span when consecutive jobs carry different trace contexts (their tracestate travels too)', async () => {
    const tracer = trace.getTracer('app');
    const remote = (state: string) =>
      trace.setSpanContext(context.active(), {
        traceId: state === 'a' ? 'a'.repeat(32) : 'b'.repeat(32),
        spanId: state === 'a' ? '1'.repeat(16) : '2'.repeat(16),
        traceFlags: 1,
        isRemote: true,
        traceState: createTraceState(`vendor=${state}`),
      });
    const enqueueUnder = (state: string) =>
      context.with(remote(state), () =>
        tracer.startActiveSpan(`enqueue ${state}`, async (s) => {
          const r = await client.enqueue(Ok, { n: 1 });
          s.end();
          return { id: r.id, span: s.spanContext() };
        }),
      );
    // Claimed in id order: a, b, a, so no two consecutive jobs share a context.
    const jobs = [await enqueueUnder('a'), await enqueueUnder('b'), await enqueueUnder('a')];
    await drain(jobs.map((j) => j.id));
    for (const j of jobs) {
      const span = spans.getFinishedSpans().find((s) => s.name === 'process t.ok' && s.attributes['messaging.message.id'] === j.id)!;
      expect(span.spanContext().traceId).toBe(j.span.traceId);
      expect(parentOf(span)).toBe(j.span.spanId);
      expect(span.parentSpanContext?.isRemote).toBe(true);
      expect(span.spanContext().traceState?.serialize()).toBe(j.span.traceState!.serialize());
    }
    expect(jobs.map((j) => j.span.traceState!.serialize())).toEqual(['vendor=a', 'vendor=b', 'vendor=a']);
  });

  it('gives a handler that never reads its span the same span, timed from its start to its settlement, written without waiting for the worker to stop', async () => {
    const { id, outer } = await trace.getTracer('app').startActiveSpan('http.request', async (s) => {
      const { id } = await client.enqueue(Ok, { n: 5 });
      s.end();
      return { id, outer: s.spanContext() };
    });
    let ran: { from: number; to: number } | undefined;
    const worker = new Worker(client, { pollMs: 10_000 });
    worker.handle(Ok, async (p) => {
      const from = Date.now();
      await new Promise((r) => setTimeout(r, 40));
      ran = { from, to: Date.now() };
      return p.n;
    });
    const run = worker.run();
    try {
      const span = await waitFor(
        async () => spans.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === id),
        (s) => s !== undefined,
        { what: "the job's span, exported while the worker runs", timeoutMs: 3000 },
      );
      const ms = (t: [number, number]) => t[0] * 1000 + t[1] / 1e6;
      expect(parentOf(span!)).toBe(outer.spanId);
      expect(span!.attributes).toMatchObject({ 'workhorse.job.type': 't.ok', 'workhorse.job.attempt': 1, 'workhorse.job.outcome': 'succeeded' });
      expect(ms(span!.startTime)).toBeLessThanOrEqual(ran!.from + 2);
      expect(ms(span!.endTime)).toBeGreaterThanOrEqual(ran!.to - 2);
      expect(ms(span!.duration)).toBeGreaterThanOrEqual(38);
    } finally {
      await worker.stop();
      await run;
    }
  });

  it("gives a handler that reads its active span the span that is exported, and a job it enqueues carries it as the parent", async () => {
    const { id } = await client.enqueue(Ok, { n: 6 });
    let seen: { spanId: string; recording: boolean } | undefined;
    let childId: string | undefined;
    const worker = new Worker(client, { pollMs: 50 });
    worker.handle(Ok, async (p) => {
      if (p.n === 6) {
        const active = trace.getActiveSpan()!;
        seen = { spanId: active.spanContext().spanId, recording: active.isRecording() };
        childId = (await client.enqueue(Ok, { n: 7 })).id;
      }
      return p.n;
    });
    const run = worker.run();
    await waitFor(
      async () => (childId ? (await db.pool.query("select count(*)::int n from workhorse.jobs where id = any($1::bigint[]) and status = 'succeeded'", [[id, childId]])).rows[0].n : 0),
      (n) => n === 2,
      { what: 'the job and its child to succeed' },
    );
    await worker.stop();
    await run;
    const span = spans.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === id)!;
    expect(seen).toEqual({ spanId: span.spanContext().spanId, recording: true });
    const child = spans.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === childId)!;
    expect(parentOf(child)).toBe(span.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(span.spanContext().traceId);
  });

  it('starts the SDK span of an attempt when something reads it, or when the attempt ends', () => {
    const now = new Date();
    const job: ClaimedJob = {
      id: '9000000000', queue: 'default', type: 't.ok', payload: {}, priority: 0, runAt: now, attempt: 1, maxAttempts: 3, execution: 1,
      timeoutMs: null, concurrencyKey: null, progress: null, createdAt: now, leaseExpiresAt: now, traceContext: null,
    };
    const unread = new JobSpan(job);
    withJobSpan(unread, () => undefined);
    expect(unread.isStarted).toBe(false);
    unread.end('succeeded', undefined, performance.now());
    expect(unread.isStarted).toBe(true);
    const read = new JobSpan(job);
    const active = withJobSpan(read, () => trace.getActiveSpan());
    expect(read.isStarted).toBe(true);
    expect(trace.getSpan(read)).toBe(active);
  });

  it('makes a child that ctx.spawn created a child span of its parent\'s attempt (the child stored no trace context)', async () => {
    const { id } = await client.enqueue(Spawner, {});
    let childId: string | undefined;
    const worker = new Worker(client, { pollMs: 50 });
    worker.handle(Spawner, async (_p, ctx) => {
      childId = (await ctx.spawn('kid', Ok, { n: 8 })).id;
      return 'spawned';
    });
    worker.handle(Ok, async (p) => p.n);
    const run = worker.run();
    await waitFor(
      async () => (childId ? (await db.pool.query("select count(*)::int n from workhorse.jobs where id = any($1::bigint[]) and status = 'succeeded'", [[id, childId]])).rows[0].n : 0),
      (n) => n === 2,
      { what: 'the parent and its child to succeed' },
    );
    await worker.stop();
    await run;
    const parent = spans.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === id)!;
    const child = spans.getFinishedSpans().find((s) => s.attributes['messaging.message.id'] === childId)!;
    expect(parentOf(child)).toBe(parent.spanContext().spanId);
    expect(child.spanContext().traceId).toBe(parent.spanContext().traceId);
  });

  it('records claimed and settled counters and the duration and queue-lag histograms', async () => {
    const { resourceMetrics } = await reader.collect();
    const m = metricsOf(resourceMetrics);
    expect(sum(m['workhorse.jobs.claimed'])).toBeGreaterThanOrEqual(2);
    const settled = m['workhorse.jobs.settled']!;
    expect(settled.find((p) => p.attributes['workhorse.job.type'] === 't.ok' && p.attributes['workhorse.job.outcome'] === 'succeeded')?.value).toBeGreaterThanOrEqual(1);
    expect(settled.find((p) => p.attributes['workhorse.job.type'] === 't.bad' && p.attributes['workhorse.job.outcome'] === 'failed')?.value).toBe(1);
    const duration = m['workhorse.job.duration']!;
    expect(duration.reduce((n, p) => n + (p.value as { count: number }).count, 0)).toBeGreaterThanOrEqual(2);
    expect(m['workhorse.job.queue_lag']!.reduce((n, p) => n + (p.value as { count: number }).count, 0)).toBeGreaterThanOrEqual(2);
  });

  it('counts exactly over a drain of several claim batches: claims, settlements by type and outcome, durations and queue lags', async () => {
    const before = metricsOf((await reader.collect()).resourceMetrics);
    const ok = await client.enqueueMany(Array.from({ length: 150 }, (_, n) => ({ job: Ok, payload: { n } })));
    const bad = await client.enqueueMany(Array.from({ length: 30 }, () => ({ job: Bad, payload: {} })));
    let claims = 0;
    // A long poll: the last batch's settlements are counted by the flush at stop, not by a later claim.
    const worker = new Worker(client, { pollMs: 10_000, concurrency: 4, prefetch: 12 });
    worker.handle(Ok, async (p) => p.n);
    worker.handle(Bad, async () => {
      throw new Error('nope');
    });
    worker.events.on('claimed', () => void claims++);
    const run = worker.run();
    const ids = [...ok, ...bad].map((j) => j.id);
    await waitFor(
      async () => (await db.pool.query("select count(*)::int n from workhorse.jobs where id = any($1::bigint[]) and status in ('succeeded','failed')", [ids])).rows[0].n,
      (n) => n === ids.length,
      { what: 'the 180 jobs to settle' },
    );
    await worker.stop();
    await run;
    expect(claims).toBeGreaterThan(5);
    const after = metricsOf((await reader.collect()).resourceMetrics);
    const delta = (name: string, attrs: Record<string, string>, of: (p: Point) => number) => {
      const pick = (m: Record<string, Point[]>) => {
        const p = (m[name] ?? []).find((x) => Object.keys(attrs).length === Object.keys(x.attributes).length && Object.entries(attrs).every(([k, v]) => x.attributes[k] === v));
        return p ? of(p) : 0;
      };
      return pick(after) - pick(before);
    };
    const value = (p: Point) => p.value as number;
    const count = (p: Point) => (p.value as { count: number }).count;
    expect(delta('workhorse.jobs.claimed', {}, value)).toBe(180);
    expect(delta('workhorse.jobs.settled', { 'workhorse.job.type': 't.ok', 'workhorse.job.outcome': 'succeeded' }, value)).toBe(150);
    expect(delta('workhorse.jobs.settled', { 'workhorse.job.type': 't.bad', 'workhorse.job.outcome': 'failed' }, value)).toBe(30);
    expect(delta('workhorse.job.duration', { 'workhorse.job.type': 't.ok', 'workhorse.job.outcome': 'succeeded' }, count)).toBe(150);
    expect(delta('workhorse.job.duration', { 'workhorse.job.type': 't.bad', 'workhorse.job.outcome': 'failed' }, count)).toBe(30);
    expect(delta('workhorse.job.queue_lag', { 'workhorse.job.type': 't.ok' }, count)).toBe(150);
    expect(delta('workhorse.job.queue_lag', { 'workhorse.job.type': 't.bad' }, count)).toBe(30);
    expect(spans.getFinishedSpans().filter((s) => ids.includes(s.attributes['messaging.message.id'] as string))).toHaveLength(180);
  });

  it('records an attempt\'s duration under what it became: suspended and retried, not failed', async () => {
    const before = metricsOf((await reader.collect()).resourceMetrics);
    const nap = await client.enqueue(Nap, {});
    const flaky = await client.enqueue(Flaky, {});
    const worker = new Worker(client, { pollMs: 50 });
    worker.handle(Nap, async (_p, ctx) => {
      await ctx.sleep('nap', 200);
      return 'rested';
    });
    worker.handle(Flaky, async (_p, ctx) => {
      if (ctx.job.attempt === 1) throw new Error('first time');
      return 'second time';
    });
    const run = worker.run();
    await waitFor(
      async () => (await db.pool.query("select count(*)::int n from workhorse.jobs where id = any($1::bigint[]) and status = 'succeeded'", [[nap.id, flaky.id]])).rows[0].n,
      (n) => n === 2,
      { what: 'both jobs to succeed' },
    );
    await worker.stop();
    await run;
    const after = metricsOf((await reader.collect()).resourceMetrics);
    const count = (m: Record<string, Point[]>, type: string, outcome: string) =>
      ((m['workhorse.job.duration'] ?? []).find((p) => p.attributes['workhorse.job.type'] === type && p.attributes['workhorse.job.outcome'] === outcome)?.value as { count: number } | undefined)?.count ?? 0;
    const delta = (type: string, outcome: string) => count(after, type, outcome) - count(before, type, outcome);
    expect([delta('t.nap', 'suspended'), delta('t.nap', 'succeeded'), delta('t.nap', 'failed')]).toEqual([1, 1, 0]);
    expect([delta('t.flaky', 'retried'), delta('t.flaky', 'succeeded'), delta('t.flaky', 'failed')]).toEqual([1, 1, 0]);
  });

  it('gives a tick its span and records the time it had left', async () => {
    const app = defineApp({ jobs: [Ok], configure: (w) => w.handle(Ok, async (p) => p.n) });
    await client.enqueue(Ok, { n: 3 });
    const summary = await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 10_000), scheduleNamespaces: ['default'] });
    expect(summary.succeeded).toBe(1);
    const [tick] = byName('workhorse.tick');
    expect(tick!.attributes).toMatchObject({ 'workhorse.tick.claimed': 1, 'workhorse.tick.succeeded': 1 });
    const job = byName('process t.ok').at(-1)!;
    expect(job.spanContext().traceId).not.toBe(tick!.spanContext().traceId); // its parent is the enqueue (none here): a root span
    const m = metricsOf((await reader.collect()).resourceMetrics);
    expect(m['workhorse.tick.time_left']!.reduce((n, p) => n + (p.value as { count: number }).count, 0)).toBe(1);
  });
});

describe('contextFrom', () => {
  const tp = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
  const stateOf = (stored: Parameters<typeof contextFrom>[0]) => trace.getSpanContext(contextFrom(stored))?.traceState?.serialize();

  it('restores the stored parent, keyed by traceparent and tracestate both (it reuses the last one restored)', () => {
    expect(stateOf({ traceparent: tp, tracestate: 'v=1' })).toBe('v=1');
    expect(stateOf({ traceparent: tp, tracestate: 'v=2' })).toBe('v=2');
    expect(stateOf({ traceparent: tp })).toBeUndefined();
    expect(contextFrom({ traceparent: tp })).toBe(contextFrom({ traceparent: tp }));
    const sc = trace.getSpanContext(contextFrom({ traceparent: tp.replace('-01', '-00') }))!;
    expect(sc).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', spanId: 'b7ad6b7169203331', traceFlags: 0, isRemote: true });
  });

  it('gives the root context for none or a malformed traceparent', () => {
    for (const bad of [null, undefined, { traceparent: 'nope' }, { traceparent: 7 } as never, { traceparent: tp.toUpperCase() }]) {
      expect(contextFrom(bad)).toBe(ROOT_CONTEXT);
    }
  });
});

type Point = { attributes: Record<string, unknown>; value: unknown };
function metricsOf(rm: ResourceMetrics): Record<string, Point[]> {
  const out: Record<string, Point[]> = {};
  for (const sm of rm.scopeMetrics) for (const md of sm.metrics) out[md.descriptor.name] = md.dataPoints as Point[];
  return out;
}
const sum = (points: Point[] | undefined) => (points ?? []).reduce((n, p) => n + (p.value as number), 0);
