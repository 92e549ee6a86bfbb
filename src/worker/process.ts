// A dedicated worker process: defineWorkerProcess describes the client and
// the workers; runWorkerProcess (used by `workhorse worker`) owns their
// lifecycle. The first SIGTERM/SIGINT drains (no new claims, active handlers
// finish, workers deregister); a second signal, or the drain deadline,
// stops hard and exits, leaving any active leases to expire and be recovered.
import type { Client } from '../client/client.js';
import { retryTransient } from '../db/retryTransient.js';
import { describeDbError } from '../db/transient.js';
import type { WorkerOptions } from './options.js';
import { Worker } from './worker.js';

export interface WorkerSpec {
  options?: WorkerOptions;
  configure(worker: Worker): void;
}

export interface WorkerProcessDefinition {
  /** Builds the client (and its pool). Called once at start. */
  client: () => Client | Promise<Client>;
  workers: WorkerSpec[];
  /** After the first signal, how long to drain before stopping hard. Default 60 s. */
  drainTimeoutMs?: number;
}

export function defineWorkerProcess(def: WorkerProcessDefinition): WorkerProcessDefinition {
  return def;
}

export interface RunningProcess {
  workers: Worker[];
  /** Resolves when every worker has stopped and the client is closed. */
  done: Promise<'drained' | 'hard'>;
  /** What a signal does: first call drains, second stops hard. */
  shutdown(): void;
}

export async function runWorkerProcess(
  def: WorkerProcessDefinition,
  log: (line: string) => void = (l) => console.error(l),
): Promise<RunningProcess> {
  const client = await def.client();
  // A database that is down at start-up is waited for (one line per try);
  // a schema mismatch fails at once.
  await retryTransient(() => client.ready(), {
    baseMs: 250,
    maxMs: 10_000,
    onRetry: (err, ms) => log(`[workhorse] cannot reach the database (${describeDbError(err)}); retrying in ${ms} ms`),
  });
  const workers = def.workers.map((spec) => {
    const w = new Worker(client, spec.options);
    spec.configure(w);
    return w;
  });
  const runs = workers.map((w) => w.run());
  let signals = 0;
  let hard = false;
  let drainTimer: NodeJS.Timeout | undefined;
  const stopHard = () => {
    hard = true;
    for (const w of workers) void w.stop({ hard: true });
  };
  const shutdown = () => {
    signals++;
    if (signals === 1) {
      log(`[workhorse] draining ${workers.length} worker(s); signal again to stop at once`);
      for (const w of workers) void w.stop();
      drainTimer = setTimeout(stopHard, def.drainTimeoutMs ?? 60_000);
      drainTimer.unref();
    } else {
      log('[workhorse] stopping now; active leases will be recovered by other workers');
      stopHard();
    }
  };
  const done = Promise.all(runs).then(async () => {
    if (drainTimer) clearTimeout(drainTimer);
    await client.close();
    return hard ? ('hard' as const) : ('drained' as const);
  });
  return { workers, done, shutdown };
}
