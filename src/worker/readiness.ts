// What a worker process's readiness probe (/readyz) answers once its
// workers run: whether the database takes their work, then whether each
// worker is registered and its heartbeats go through. The database's state
// is asked first, as it explains the rest: a worker that could not register
// on a read-only database said only "not registered".
import { READ_ONLY_REASON } from '../db/ping.js';
import { operatorHint } from '../db/operatorFixable.js';
import { describeDbError } from '../db/transient.js';
import type { Worker } from './worker.js';

export type Readiness = { ok: true } | { ok: false; reason: string };

/** Why the database cannot take the workers' work (`err`: the ping's failure). */
function pingReason(err: unknown): string {
  if (err instanceof Error && err.message === READ_ONLY_REASON) return READ_ONLY_REASON;
  const hint = operatorHint(err);
  return hint !== undefined ? `the database refuses the worker's calls: ${describeDbError(err)}; ${hint}` : `the database does not answer: ${describeDbError(err)}`;
}

export async function readiness(workers: readonly Worker[], ping: () => Promise<void>): Promise<Readiness> {
  try {
    await ping();
  } catch (err) {
    return { ok: false, reason: pingReason(err) };
  }
  const unregistered = workers.filter((w) => !w.runtimeState().registered);
  if (unregistered.length > 0) return { ok: false, reason: `not registered: ${unregistered.map((w) => w.workerId).join(', ')}` };
  // A database that answers a ping but refuses or cancels the worker's own calls (a statement_timeout or a lock
  // they cannot beat) keeps no lease: not ready once a heartbeat interval has failed.
  const failing = workers.filter((w) => w.runtimeState().heartbeatFailingMs >= w.options.heartbeatMs);
  if (failing.length > 0) {
    const ms = Math.max(...failing.map((w) => w.runtimeState().heartbeatFailingMs));
    return { ok: false, reason: `heartbeats failing for ${(ms / 1000).toFixed(1)} s: ${failing.map((w) => w.workerId).join(', ')} (the worker's log says why)` };
  }
  return { ok: true };
}
