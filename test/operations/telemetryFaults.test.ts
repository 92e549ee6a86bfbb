// The application's OpenTelemetry setup failing, and failures that are not
// Errors: a span processor that throws (in onStart or onEnd) costs a span,
// never a job or a tick, whether or not the handler reads its span; a
// handler that throws a string, an object or undefined still gives an error
// span with its exception recorded; a tick's span carries every count of
// its summary.
import { context, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan, type Span, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { runTick } from '../../src/tick/runTick.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

/** Throws in onStart and/or onEnd for the spans whose name matches, while armed. */
class ThrowingProcessor implements SpanProcessor {
  on: { start?: RegExp; end?: RegExp } = {};
  onStart(span: Span): void {
    if (this.on.start?.test(span.name)) throw new Error('processor onStart boom');
  }
  onEnd(span: ReadableSpan): void {
    if (this.on.end?.test(span.name)) throw new Error('processor onEnd boom');
  }
  async forceFlush(): Promise<void> {}
  async shutdown(): Promise<void> {}
}

const Reads = defineJob({ type: 'tf.reads', schema: z.object({ how: z.enum(['active', 'own', 'enqueue', 'nothing']) }) });
const Throws = defineJob({ type: 'tf.throws', schema: z.object({ what: z.enum(['string', 'object', 'undefined', 'null']) }), retry: { maxAttempts: 1 } });
const Naps = defineJob({ type: 'tf.naps', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
const exported = new InMemorySpanExporter();
const throwing = new ThrowingProcessor();

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url, jobs: [Reads, Throws, Naps] });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  // The throwing processor first: the SDK calls processors in order, so an onEnd throw skips the exporter.
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [throwing, new SimpleSpanProcessor(exported)] }));
});
afterAll(async () => {
  trace.disable();
  context.disable();
  await client.close();
  await db.drop();
});
beforeEach(() => {
  throwing.on = {};
  exported.reset();
});

const app = defineApp({
  jobs: [Reads, Throws, Naps],
  configure: (w) => {
    w.handle(Reads, async (p) => {
      if (p.how === 'active') return trace.getActiveSpan()?.isRecording() ?? 'none';
      if (p.how === 'own') return trace.getTracer('app').startActiveSpan('mine', (s) => (s.end(), 'own'));
      if (p.how === 'enqueue') return (await client.enqueue(Naps, {}, { delayMs: 3_600_000 })).id;
      return 'nothing';
    });
    w.handle(Throws, async (p) => {
      throw p.what === 'string' ? 'a string' : p.what === 'object' ? { code: 42 } : p.what === 'null' ? null : undefined;
    });
    w.handle(Naps, async (_p, ctx) => {
      await ctx.sleep('nap', 60_000);
    });
  },
});

const tickNow = () => runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 10_000), scheduleNamespaces: ['default'] });

async function statuses(ids: string[]): Promise<string[]> {
  const { rows } = await db.pool.query<{ status: string }>('select status from workhorse.jobs where id = any($1::bigint[]) order by id', [ids]);
  return rows.map((r) => r.status);
}

const readers = async () => (await client.enqueueMany((['active', 'own', 'enqueue', 'nothing'] as const).map((how) => ({ job: Reads, payload: { how } })))).map((j) => j.id);

describe('a span processor that throws', () => {
  it("in onStart, for workhorse's spans: a tick still runs its jobs, each handler goes on whatever it reads, and the tick returns its summary", async () => {
    throwing.on = { start: /^(workhorse\.tick|process )/ };
    const ids = await readers();
    const summary = await tickNow();
    expect(summary).toMatchObject({ claimed: 4, succeeded: 4, failed: 0 });
    expect(await statuses(ids)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    const { rows } = await db.pool.query<{ result: unknown }>('select result from workhorse.jobs where id = $1', [ids[0]]);
    expect(rows[0]!.result).toBe(false); // the active span was there, not recording
  });

  it('in onEnd: the tick returns its summary, and the spans the processor did not refuse are exported', async () => {
    throwing.on = { end: /^workhorse\.tick$/ };
    const ids = await readers();
    const summary = await tickNow();
    expect(summary).toMatchObject({ claimed: 4, succeeded: 4 });
    expect(await statuses(ids)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(exported.getFinishedSpans().filter((s) => s.name === 'process tf.reads')).toHaveLength(4);
  });

  it("in onStart for the job's span only: a worker's handlers that read it, start spans or enqueue still succeed", async () => {
    throwing.on = { start: /^process / };
    const ids = await readers();
    const worker = new Worker(client, { pollMs: 50 });
    app.configure(worker);
    const run = worker.run();
    try {
      await waitFor(() => statuses(ids), (s) => s.every((x) => x !== 'ready' && x !== 'running'), { what: 'the four jobs to settle' });
    } finally {
      await worker.stop();
      await run;
    }
    expect(await statuses(ids)).toEqual(['succeeded', 'succeeded', 'succeeded', 'succeeded']);
    expect(exported.getFinishedSpans().map((s) => s.name)).toEqual(['mine']);
  });
});

describe('a failure that is not an Error', () => {
  it('gives an error span with its exception recorded, whatever was thrown', async () => {
    const jobs = await client.enqueueMany((['string', 'object', 'undefined', 'null'] as const).map((what) => ({ job: Throws, payload: { what } })));
    expect(await tickNow()).toMatchObject({ claimed: 4, failed: 4 });
    const byId = new Map(exported.getFinishedSpans().map((s) => [s.attributes['messaging.message.id'], s]));
    const seen = jobs.map((j) => {
      const s = byId.get(j.id)!;
      const exception = s.events.find((e) => e.name === 'exception');
      return { outcome: s.attributes['workhorse.job.outcome'], code: s.status.code, message: s.status.message, exception: exception?.attributes?.['exception.message'] };
    });
    expect(seen).toEqual([
      { outcome: 'failed', code: 2, message: 'a string', exception: 'a string' },
      { outcome: 'failed', code: 2, message: '{"code":42}', exception: '{"code":42}' },
      { outcome: 'failed', code: 2, message: 'job failed: the handler threw undefined', exception: 'job failed: the handler threw undefined' },
      { outcome: 'failed', code: 2, message: 'null', exception: 'null' },
    ]);
  });
});

describe("a tick's span", () => {
  it('carries every count of the summary, suspended included', async () => {
    await client.enqueue(Naps, {});
    const summary = await tickNow();
    expect(summary.suspended).toBe(1);
    const [tick] = exported.getFinishedSpans().filter((s) => s.name === 'workhorse.tick');
    expect(tick!.attributes).toMatchObject({
      'workhorse.tick.claimed': summary.claimed,
      'workhorse.tick.suspended': 1,
      'workhorse.tick.skipped_timeout': summary.skippedTimeout,
      'workhorse.tick.fanned_out': summary.fannedOut,
      'workhorse.tick.ms_left': summary.msLeft,
    });
  });
});
