// An app's `jobs` is every job type it enqueues or handles: the tick and an
// appWorker claim from those jobs' queues, the app's client validates
// enqueues against them, and the HTTP API accepts them. A handler that
// `configure` binds for a type outside them was accepted without a word,
// and its jobs ran only if they happened to land on one of the app's queues
// (a definition on a queue of its own never ran). It is a ConfigError,
// raised where the app is configured, naming the type and the fix.
import { ConfigError } from '../errors.js';
import type { WorkhorseApp } from './defineApp.js';

/** Throws a ConfigError for the first of `handled` that the app's jobs do not define. */
export function refuseHandlersOutsideApp(app: WorkhorseApp, handled: readonly string[]): void {
  const defined = new Set(app.jobs.map((j) => j.type));
  const outside = handled.find((type) => !defined.has(type));
  if (outside === undefined) return;
  const message = `configure binds a handler for "${outside}", which is not one of the app's jobs: add its defineJob() value to defineApp({ jobs }) (the app's queues, its client's validation and the HTTP API come from jobs)`;
  throw new ConfigError(`app: ${message}`, [{ path: ['configure'], message }]);
}
