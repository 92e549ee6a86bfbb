// An app's configure (and a worker process's worker spec's) registers the
// handlers on a worker synchronously: the tick claims, and the process runs
// its workers, right after it returns. An async one was called and not
// awaited: handlers it added after its first await came too late (every tick
// claimed nothing, without a word), and its rejection was an unhandled one
// that ended the process with no drain. Both are refused as a ConfigError.
import { ConfigError } from '../errors.js';

const SYNC_ONLY =
  'register handlers synchronously; create what they need (a mailer, an SDK client) before defineApp, or lazily inside the handlers';

/** Whether `fn` is an `async function` (or async arrow). */
function isAsyncFunction(fn: unknown): boolean {
  return typeof fn === 'function' && fn.constructor?.name === 'AsyncFunction';
}

/** At definition: an `async configure` is refused before anything runs. */
export function refuseAsyncConfigure(fn: unknown, what: string): void {
  if (isAsyncFunction(fn)) throw new ConfigError(`${what}: configure is an async function: ${SYNC_ONLY}`, [{ path: ['configure'], message: 'must not be async' }]);
}

/** Whether `r` is a promise or any thenable: what configure must not return. */
export function isThenable(r: unknown): r is PromiseLike<unknown> {
  return r !== null && typeof r === 'object' && typeof (r as { then?: unknown }).then === 'function';
}

/** Calls `configure(worker)`; one that returns a promise (a function that is async without the keyword) is a ConfigError, its outcome ignored. */
export function configureWorker<W>(configure: (worker: W) => unknown, worker: W, what: string): void {
  const r: unknown = configure(worker);
  if (isThenable(r)) {
    // Its rejection is not an unhandled one; a thenable whose then throws changes nothing here.
    try {
      r.then(undefined, () => undefined);
    } catch {
      // Refused below all the same.
    }
    throw new ConfigError(`${what}: configure returned a promise: ${SYNC_ONLY}`, [{ path: ['configure'], message: 'must not return a promise' }]);
  }
}
