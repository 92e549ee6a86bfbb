// What OpenTelemetry costs a drain, measured in this process on a fresh
// database: the same no-op drain with no provider registered and with a
// tracer provider (batching span processor, exporter that drops) and a meter
// provider (every instrument aggregated) registered, the two taking turns
// round by round so a drift of the machine hits both, after one unreported
// drain in each mode (the JIT's warm-up, which the first round otherwise
// pays). Reports each round's rate, the medians and their ratio, the median
// of the per-round ratios (each round's two drains ran back to back, so a
// change of the machine's load between rounds cancels out), and the spread
// between the rounds without a provider (the noise floor a difference must
// clear to mean anything). PostgreSQL's CPU per job is read beside the
// worker's: on a machine whose cores the server shares, a drain that runs
// as fast as the CPU allows loses floor / (worker + server + floor) to the
// SDK's own work wherever it runs. A drain bound partly by the claim's round
// trip can lose less: the worker writes most of that work while it waits
// for a claim (src/telemetry/telemetryBacklog.ts).
import { context, metrics, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { z } from 'zod';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { databaseCpuMs } from '../serverCpu.js';
import { median } from '../stats.js';
import { withDatabase, type PhaseContext } from './context.js';
import { measureSdkFloor, type SdkFloor } from './telemetryFloor.js';

const Noop = defineJob({ type: 'bench.otel', queue: 'otel', schema: z.object({}) });

export interface TelemetryResult {
  jobs: number;
  offRates: number[];
  onRates: number[];
  offMedian: number;
  onMedian: number;
  /** onMedian / offMedian. */
  ratio: number;
  /** The median over the rounds of that round's on / off rate. */
  pairedRatio: number;
  /** The lowest and highest per-round on / off rate. */
  pairedRange: [number, number];
  /** (max - min) / median of the rounds without a provider. */
  offSpread: number;
  /** This process's CPU (user + system) per job, median of the rounds, µs. */
  offCpuUs: number;
  onCpuUs: number;
  /** The PostgreSQL backends' CPU per job, median of the rounds, µs (null when /proc cannot see them). */
  offServerCpuUs: number | null;
  onServerCpuUs: number | null;
  spansExported: number;
  /** One job's telemetry calls with no queue around it (telemetryFloor.ts), with the same providers. */
  sdkFloor: SdkFloor;
}

class DroppingExporter implements SpanExporter {
  count = 0;
  export(spans: ReadableSpan[], done: (r: { code: number }) => void): void {
    this.count += spans.length;
    done({ code: 0 });
  }
  async shutdown(): Promise<void> {}
}

class IdleReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

type Mode = 'off' | 'on';

export async function measureTelemetry(ctx: PhaseContext): Promise<TelemetryResult> {
  const jobs = Math.min(ctx.flags.jobs, 10_000);
  return withDatabase(ctx, 'workhorse', async (db) => {
    const client = createClient({ connectionString: db.url, jobs: [Noop], poolMax: 6 });
    await client.migrate();
    const exporter = new DroppingExporter();
    const offRates: number[] = [];
    const onRates: number[] = [];
    const offCpu: number[] = [];
    const onCpu: number[] = [];
    const offServer: number[] = [];
    const onServer: number[] = [];
    const serverCpuMs = () => databaseCpuMs(ctx.serverUrl, db.name);
    /** Runs `fn` with what a NodeSDK setup registers (mode on) or nothing (off). */
    const withProviders = async <T>(mode: Mode, fn: (flush: () => Promise<void>) => Promise<T>): Promise<T> => {
      let tracer: BasicTracerProvider | undefined;
      let meter: MeterProvider | undefined;
      if (mode === 'on') {
        context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
        tracer = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { maxQueueSize: 100_000, maxExportBatchSize: 2048 })] });
        trace.setGlobalTracerProvider(tracer);
        meter = new MeterProvider({ readers: [new IdleReader()] });
        metrics.setGlobalMeterProvider(meter);
      }
      try {
        return await fn(async () => {
          await tracer?.forceFlush();
        });
      } finally {
        if (tracer) await tracer.forceFlush();
        trace.disable();
        metrics.disable();
        context.disable();
        await tracer?.shutdown();
        await meter?.shutdown();
      }
    };
    const drain = (mode: Mode) => withProviders(mode, () => drainOnce(client, jobs, ctx.flags.concurrency, ctx.flags.prefetch, serverCpuMs));
    try {
      for (const mode of ['off', 'on'] as const) {
        const { rate } = await drain(mode);
        ctx.log(`telemetry warm-up, provider ${mode}: ${Math.round(rate)} jobs/s (not counted)`);
      }
      exporter.count = 0;
      const rounds = Math.max(5, ctx.flags.rounds);
      for (let round = 1; round <= rounds; round++) {
        const order = round % 2 ? (['off', 'on'] as const) : (['on', 'off'] as const);
        for (const mode of order) {
          const { rate, cpuUs, serverCpuUs } = await drain(mode);
          (mode === 'on' ? onRates : offRates).push(rate);
          (mode === 'on' ? onCpu : offCpu).push(cpuUs);
          if (serverCpuUs !== null) (mode === 'on' ? onServer : offServer).push(serverCpuUs);
          const server = serverCpuUs === null ? '' : `, PostgreSQL ${serverCpuUs.toFixed(1)} µs`;
          ctx.log(`telemetry round ${round}/${rounds}, provider ${mode}: ${Math.round(rate)} jobs/s, ${cpuUs.toFixed(1)} µs CPU per job${server}`);
        }
      }
    } finally {
      await client.close();
    }
    const spansExported = exporter.count;
    const sdkFloor = await withProviders('on', (flush) => measureSdkFloor(jobs, Noop.type, Noop.queue, flush));
    ctx.log(`telemetry SDK floor: span ${sdkFloor.spanUs.toFixed(1)} µs, two histogram records ${sdkFloor.recordsUs.toFixed(1)} µs per job`);
    const paired = onRates.map((on, i) => on / offRates[i]!);
    const offMedian = median(offRates);
    const onMedian = median(onRates);
    return {
      jobs,
      offRates,
      onRates,
      offMedian,
      onMedian,
      ratio: onMedian / offMedian,
      pairedRatio: median(paired),
      pairedRange: [Math.min(...paired), Math.max(...paired)],
      offSpread: (Math.max(...offRates) - Math.min(...offRates)) / offMedian,
      offCpuUs: median(offCpu),
      onCpuUs: median(onCpu),
      offServerCpuUs: offServer.length === offRates.length ? median(offServer) : null,
      onServerCpuUs: onServer.length === onRates.length ? median(onServer) : null,
      spansExported,
      sdkFloor,
    };
  });
}

/** Enqueues `jobs` no-op jobs, then drains them with one worker; returns jobs per second, and this process's and the server's CPU per job. */
async function drainOnce(
  client: ReturnType<typeof createClient>,
  jobs: number,
  concurrency: number,
  prefetch: number,
  serverCpuMs: () => Promise<number | null>,
): Promise<{ rate: number; cpuUs: number; serverCpuUs: number | null }> {
  for (let i = 0; i < jobs; i += 1000) {
    await client.enqueueMany(Array.from({ length: Math.min(1000, jobs - i) }, () => ({ job: Noop, payload: {} })));
  }
  const worker = new Worker(client, { queue: 'otel', concurrency, prefetch, pollMs: 50, heartbeatMs: 30_000 });
  worker.handle(Noop, async () => null);
  let settled = 0;
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => (resolveDone = r));
  worker.events.on('settled', () => {
    if (++settled === jobs) resolveDone();
  });
  const server0 = await serverCpuMs();
  const t0 = performance.now();
  const cpu0 = process.cpuUsage();
  const run = worker.run();
  await done;
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const server1 = await serverCpuMs();
  await worker.stop();
  await run;
  await client.pool.query("delete from workhorse.jobs where type = 'bench.otel'");
  const serverCpuUs = server0 === null || server1 === null ? null : ((server1 - server0) * 1000) / jobs;
  return { rate: jobs / seconds, cpuUs: (cpu.user + cpu.system) / jobs, serverCpuUs };
}

export function telemetryLines(t: TelemetryResult): string[] {
  const r = (xs: number[]) => xs.map((x) => Math.round(x)).join(', ');
  const pct = (x: number) => (x * 100).toFixed(1);
  const floor = t.sdkFloor.spanUs + t.sdkFloor.recordsUs;
  return [
    '',
    `OpenTelemetry (workhorse, ${t.jobs} no-op jobs per drain, one worker, rounds interleaved):`,
    `  no provider: median ${Math.round(t.offMedian)} jobs/s (rounds ${r(t.offRates)}; spread ${(t.offSpread * 100).toFixed(1)} %)`,
    `  tracer + meter provider: median ${Math.round(t.onMedian)} jobs/s (rounds ${r(t.onRates)}); ${t.spansExported} spans exported`,
    `  cost of a registered provider: ${pct(1 - t.ratio)} % of the drain rate (medians); ${pct(1 - t.pairedRatio)} % round by round (median; rounds ${pct(1 - t.pairedRange[1])} to ${pct(1 - t.pairedRange[0])} %)`,
    `  worker CPU per job ${t.offCpuUs.toFixed(1)} µs -> ${t.onCpuUs.toFixed(1)} µs (+${(t.onCpuUs - t.offCpuUs).toFixed(1)} µs)${
      t.offServerCpuUs === null || t.onServerCpuUs === null ? '' : `; PostgreSQL CPU per job ${t.offServerCpuUs.toFixed(1)} µs -> ${t.onServerCpuUs.toFixed(1)} µs`
    }`,
    `  one job's telemetry with no queue around it (its span, made active and ended, and two histogram records; nearly all SDK work): ${floor.toFixed(1)} µs (span ${t.sdkFloor.spanUs.toFixed(1)}, records ${t.sdkFloor.recordsUs.toFixed(1)}); what the queue around it adds: ${(t.onCpuUs - t.offCpuUs - floor).toFixed(1)} µs`,
    `  that alone, added to the worker's CPU per job without a provider: ${pct(floor / (t.offCpuUs + floor))} % of the rate of a drain bound by the worker's CPU`,
    ...serverBound(t, floor, pct),
  ];
}

/**
 * What a registered provider costs a drain as fast as the CPU allows, on a
 * machine whose cores the server shares with the worker: it does worker +
 * server CPU per job, and the SDK's own work is added to it.
 */
function serverBound(t: TelemetryResult, floor: number, pct: (x: number) => string): string[] {
  if (t.offServerCpuUs === null) return [];
  const total = t.offCpuUs + t.offServerCpuUs;
  return [
    `  that alone, added to worker + PostgreSQL CPU per job without a provider (${total.toFixed(1)} µs, the cost of a drain bound by CPU the two share): ${pct(floor / (total + floor))} % of its rate (a drain bound partly by the claim's round trip, whose wait the worker fills with this work, can lose less)`,
  ];
}
