// The public workerTiming: what a worker given these options would use, or
// the same ConfigError `new Worker(...)` throws for them. The input is
// checked by the worker options schema itself (src/worker/options.ts), so
// the bounds and the rule that a heartbeat is shorter than the lease are
// the worker's, never a second copy; the derivation is src/timing.ts's.
import { ConfigError } from './errors.js';
import { deriveWorkerTiming, type WorkerTiming } from './timing.js';
import { parseConfig } from './validation.js';
import { workerOptionsSchema } from './worker/options.js';

const TIMING_KEYS = ['heartbeatMs', 'leaseMs'];

/**
 * The timing of a worker given `heartbeatMs` and/or `leaseMs`: neither
 * (45 s / 180 s), only `heartbeatMs` (the lease is four heartbeats), only
 * `leaseMs` (the heartbeat is a third of it), or both. Values a Worker
 * refuses (not whole milliseconds, out of its bounds, a heartbeat not
 * shorter than the lease, another key) throw its ConfigError.
 */
export function workerTiming(given: { heartbeatMs?: number | undefined; leaseMs?: number | undefined }): WorkerTiming {
  if (typeof given !== 'object' || given === null || Array.isArray(given)) {
    throw new ConfigError('invalid worker timing: expected { heartbeatMs?, leaseMs? }', [{ path: [], message: 'expected an object' }]);
  }
  const other = Object.keys(given).find((k) => !TIMING_KEYS.includes(k));
  if (other !== undefined) {
    const message = `unknown key "${other}": workerTiming takes heartbeatMs and leaseMs`;
    throw new ConfigError(`invalid worker timing: ${message}`, [{ path: [other], message }]);
  }
  return deriveWorkerTiming(parseConfig(workerOptionsSchema, given, 'worker timing'));
}
