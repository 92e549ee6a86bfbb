// A dedicated worker process: defineWorkerProcess describes the adapter
// (the database resources), the workers and optional HTTP probes;
// runWorkerProcess (used by `workhorse worker`) owns their lifecycle. The
// first SIGTERM/SIGINT stops claims and drains (active handlers finish,
// workers deregister, the adapter closes); a second signal, or the drain
// deadline, is a hard stop: the CLI exits at once with a non-zero code,
// whatever handlers do, leaving PostgreSQL to recover the active leases.
// Each phase is logged in one line.
import * as z from 'zod';
import type { Client } from '../client/client.js';
import { pingDatabase } from '../db/ping.js';
import { retryTransient } from '../db/retryTransient.js';
import { describeDbError } from '../db/transient.js';
import { operatorHint } from '../db/operatorFixable.js';
import { ConfigError } from '../errors.js';
import { parseConfig } from '../validation.js';
import type { WorkhorseAdapter } from './adapter.js';
import { autovacuumWarning } from './autovacuumCheck.js';
import { configureWorker } from './configureWorker.js';
import { workerOptionsSchema, type WorkerOptions } from './options.js';
import { probeOptionsSchema, startProbes, type ProbeOptions, type ProbeServer } from './probes.js';
import { outcomeLine } from './outcomeLog.js';
import { readiness } from './readiness.js';
import { Worker } from './worker.js';

export interface WorkerSpec {
  options?: WorkerOptions;
  configure(worker: Worker): void;
}

export interface WorkerProcessDefinition {
  /** Builds the process's database resources (createWorkhorseAdapter). Called once at start. */
  adapter?: () => WorkhorseAdapter | Promise<WorkhorseAdapter>;
  /** Or a client (closed with the process); give exactly one of adapter and client. */
  client?: () => Client | Promise<Client>;
  workers: WorkerSpec[];
  /** Liveness and readiness over HTTP (see probes.ts). */
  probes?: ProbeOptions;
  /** After the first signal, how long to drain before stopping hard. Default 60 s. */
  drainTimeoutMs?: number;
  /** One log line per failed attempt (retried, or failed for good). Default true. */
  logFailures?: boolean;
}

/** The shortest drain deadline: time to deregister and close with nothing running. */
export const MIN_DRAIN_MS = 500;

const fn = (what: string) => z.custom<(...a: never[]) => unknown>((v) => typeof v === 'function', `${what} must be a function`);

const definitionSchema = z
  .object({
    adapter: fn('adapter').optional(),
    client: fn('client').optional(),
    // Each worker's options are checked here, when the module loads, not when its Worker is built.
    workers: z.array(z.object({ options: workerOptionsSchema.optional(), configure: fn('configure') }).strict()).min(1),
    probes: probeOptionsSchema.optional(),
    // The deadline holds the whole stop (deregistering, closing the pool), not only the handlers: under
    // MIN_DRAIN_MS an idle worker exited 124 and left its registry row draining.
    drainTimeoutMs: z
      .number()
      .int()
      .min(MIN_DRAIN_MS, `at least ${MIN_DRAIN_MS} ms: the drain deadline also holds the worker's deregistration and the adapter's close`)
      .max(86_400_000)
      .default(60_000),
    logFailures: z.boolean().default(true),
  })
  .strict()
  .refine((d) => Boolean(d.adapter) !== Boolean(d.client), { message: 'give exactly one of adapter and client', path: ['adapter'] });

/** Checks the definition now (a ConfigError naming each problem) and returns it. */
export function defineWorkerProcess(def: WorkerProcessDefinition): WorkerProcessDefinition {
  parseConfig(definitionSchema, def, 'worker process definition');
  return def;
}

/** Exit codes of `workhorse worker`. */
export const EXIT_DRAINED = 0;
export const EXIT_FAILED = 1;
export const EXIT_SECOND_SIGNAL = 130;
export const EXIT_DRAIN_DEADLINE = 124;
/**
 * Drained, but some handlers' outcomes written during the drain were given
 * up (a settlement refused past its lease window): no job is lost (recovery
 * runs them again and counts an attempt), but the drain did not keep every
 * outcome, so a deploy script or a supervisor should hear of it.
 */
export const EXIT_OUTCOMES_DROPPED = 3;

/** Handlers' outcomes the process's workers gave up writing: in all, and since the drain began. */
export interface DroppedOutcomes {
  total: number;
  duringDrain: number;
}

/** The exit code and the last log line of a process that stopped `how`, having given up `dropped` outcomes. */
export function stopReport(how: 'drained' | 'hard' | 'failed', dropped: DroppedOutcomes): { code: number; line: string } {
  if (how !== 'drained') return { code: EXIT_FAILED, line: `[workhorse] stopped after a failure; exiting ${EXIT_FAILED}` };
  const outcomes = (n: number) => `${n} job outcome${n === 1 ? '' : 's'}`;
  if (dropped.duringDrain > 0) {
    return {
      code: EXIT_OUTCOMES_DROPPED,
      line:
        `[workhorse] drained, but gave up writing ${outcomes(dropped.duringDrain)} during the drain (${dropped.total} in this process's life): ` +
        `recovery runs those jobs again and counts an attempt (none if the database lost its leases in a crash); exiting ${EXIT_OUTCOMES_DROPPED}`,
    };
  }
  const earlier = dropped.total > 0 ? ` (${outcomes(dropped.total)} given up before the drain, left to recovery)` : '';
  return { code: EXIT_DRAINED, line: `[workhorse] drained${earlier}; exiting ${EXIT_DRAINED}` };
}

export interface RunningProcess {
  workers: Worker[];
  /** The port the probes listen on, when they are on. */
  probePort: number | undefined;
  /** Resolves once every worker has stopped and the adapter is closed (or at a hard stop). */
  done: Promise<'drained' | 'hard' | 'failed'>;
  /** What a signal does: the first drains, the second stops hard. */
  shutdown(signal?: string): void;
  /** Handlers' outcomes the workers gave up writing (their jobs left to recovery): in all, and since the drain began. */
  droppedOutcomes(): DroppedOutcomes;
}

export interface RunProcessOptions {
  log?: (line: string) => void;
  /** A hard stop (second signal, drain deadline): the CLI passes process.exit. Default: stop the workers hard in-process. */
  exit?: (code: number) => void;
}

export async function runWorkerProcess(def: WorkerProcessDefinition, o: RunProcessOptions = {}): Promise<RunningProcess> {
  const d = parseConfig(definitionSchema, def, 'worker process definition');
  const log = o.log ?? ((l: string) => console.error(l));
  const adapter = def.adapter ? await def.adapter() : adapterOf(await def.client!());
  if (!adapter || typeof adapter !== 'object' || !('client' in adapter)) throw new ConfigError('adapter() must return createWorkhorseAdapter(...)');
  let probes: ProbeServer | undefined;
  try {
    return await startProcess(d, def, adapter, o, log, (p) => (probes = p));
  } catch (err) {
    // Nothing runs yet: release what was opened, so a failed start (a schema of the wrong version) ends the process at once.
    await probes?.close().catch(() => undefined);
    await adapter.close().catch(() => undefined);
    throw err;
  }
}

/** Builds the workers, starts the probes (reported through `opened`), waits for the database and runs the workers. */
async function startProcess(
  d: z.output<typeof definitionSchema>,
  def: WorkerProcessDefinition,
  adapter: WorkhorseAdapter,
  o: RunProcessOptions,
  log: (line: string) => void,
  opened: (probes: ProbeServer) => void,
): Promise<RunningProcess> {
  const workers = def.workers.map((spec) => {
    const w = new Worker(adapter.client, spec.options);
    configureWorker((x: Worker) => spec.configure(x), w, `worker ${spec.options?.workerId ?? def.workers.indexOf(spec)}`);
    if (d.logFailures) {
      w.events.on('settled', (outcome) => {
        const line = outcomeLine(w.workerId, outcome);
        if (line) log(line);
      });
    }
    return w;
  });
  let phase: 'starting' | 'running' | 'draining' | 'stopped' = 'starting';
  let probes: ProbeServer | undefined;
  if (d.probes) {
    probes = await startProbes(d.probes, {
      live: () => (phase === 'stopped' ? { ok: false, reason: 'the worker loops have ended' } : { ok: true }),
      ready: async (timeoutMs) => {
        if (phase !== 'running') return { ok: false, reason: phase };
        return readiness(workers, () => adapter.ping(timeoutMs));
      },
      workers: () => workers.map((w) => ({ id: w.workerId, ...pick(w.runtimeState()) })),
    });
    opened(probes);
    log(`[workhorse] probes on ${d.probes.host ?? '0.0.0.0'}:${probes.port} (${d.probes.livenessPath ?? '/livez'}, ${d.probes.readinessPath ?? '/readyz'})`);
  }
  // A database that is down at start-up is waited for (one line per try), a statement its statement_timeout
  // cancelled too; a schema mismatch, and a privilege the login lacks, fail at once (a deploy's configuration).
  await retryTransient(() => adapter.client.ready(), {
    baseMs: 250,
    maxMs: 10_000,
    stopOn: (err) => operatorHint(err) !== undefined,
    onRetry: (err, ms) => log(`[workhorse] cannot reach the database (${describeDbError(err)}); retrying in ${ms} ms`),
  });
  const vacuum = await autovacuumWarning(adapter.client.calls);
  if (vacuum) log(vacuum);
  let signals = 0;
  let failed = false;
  let drainTimer: NodeJS.Timeout | undefined;
  let stopHardNow!: (how: 'hard') => void;
  const hardStopped = new Promise<'hard'>((resolve) => (stopHardNow = resolve));
  /** `why`: `second SIGINT`, `drain deadline (60000 ms) passed`. */
  const stopHard = (code: number, why: string) => {
    const running = workers.reduce((n, w) => n + w.runtimeState().active, 0);
    // Finished handlers whose outcomes were still being written (a fault held them): given up too, and said so.
    const settling = workers.reduce((n, w) => n + w.runtimeState().settling, 0);
    const unwritten = settling > 0 ? `, and ${settling} finished job(s) whose outcome was not written yet (recovery counts an attempt for each)` : '';
    if (o.exit) {
      log(`[workhorse] ${why}: exiting now (code ${code}); ${running} running job(s) left to recovery once their leases run out${unwritten}`);
      return o.exit(code);
    }
    // In a process the caller owns nothing exits: the running handlers are aborted and their jobs set to retry.
    log(`[workhorse] ${why}: stopping the workers at once; ${running} running job(s) are aborted and retried${unwritten}`);
    for (const w of workers) void w.stop({ hard: true });
    stopHardNow('hard');
  };
  const dropped = () => workers.reduce((n, w) => n + w.runtimeState().droppedOutcomes, 0);
  let droppedBeforeDrain: number | undefined;
  const droppedOutcomes = (): DroppedOutcomes => {
    const total = dropped();
    return { total, duringDrain: droppedBeforeDrain === undefined ? 0 : total - droppedBeforeDrain };
  };
  const shutdown = (signal = 'stop') => {
    signals++;
    if (signals === 1) {
      phase = 'draining';
      droppedBeforeDrain = dropped();
      log(`[workhorse] ${signal}: draining ${workers.length} worker(s) (deadline ${d.drainTimeoutMs} ms); signal again to exit at once`);
      for (const w of workers) void w.stop();
      drainTimer = setTimeout(
        () => stopHard(EXIT_DRAIN_DEADLINE, `drain deadline (${d.drainTimeoutMs} ms) passed`),
        d.drainTimeoutMs,
      );
    } else if (signals === 2) {
      stopHard(EXIT_SECOND_SIGNAL, `second ${signal}`);
    }
  };
  const runs = workers.map((w) =>
    w.run().catch((err: unknown) => {
      failed = true;
      log(`[workhorse] worker ${w.workerId} failed: ${err instanceof Error ? err.message : String(err)}`);
      if (signals === 0) shutdown('failure');
    }),
  );
  phase = 'running';
  const stopped = Promise.all(runs).then(async () => {
    phase = 'stopped';
    // The probes close whatever the adapter's close does: a throwing close
    // must not keep the process alive on its probe server. The drain
    // deadline holds until the close is done: closing against a hung server
    // is part of the drain.
    try {
      await adapter.close();
    } catch (err) {
      failed = true;
      log(`[workhorse] closing the database resources failed: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      if (drainTimer) clearTimeout(drainTimer);
      await probes?.close().catch(() => undefined);
    }
    return failed ? ('failed' as const) : ('drained' as const);
  });
  return { workers, probePort: probes?.port, done: Promise.race([stopped, hardStopped]), shutdown, droppedOutcomes };
}

function pick(s: ReturnType<Worker['runtimeState']>) {
  return { registered: s.registered, running: s.running, stopping: s.stopping, paused: s.paused, active: s.active };
}

/** A bare client as an adapter (the older `client:` form of the definition). */
function adapterOf(client: Client): WorkhorseAdapter {
  return {
    client,
    namespace: client.namespace,
    ping: (timeoutMs = 2_000) => pingDatabase(client.pool, timeoutMs),
    close: () => client.close(),
  };
}
