// A defineApp() app as a worker of a long-lived process, doing what a tick
// of the same app does: its handlers bound, the app's queues claimed from
// (its jobs' and its schedules', appQueues.ts), its schedules stored,
// declared and fired, and the `sys` slots run (retention, and the outbox
// and alerts when the app configures them). Written by hand, that glue was
// easy to get half right: a worker claims from `default` unless told
// otherwise (an app whose jobs go to `email` ran none of them), and one
// without `scheduleNamespaces` and `schedules` fires no schedule and runs
// no retention, and says nothing about it.
import type { WorkerOptions } from '../worker/options.js';
import type { WorkerSpec } from '../worker/process.js';
import { tickScheduleNamespaces } from '../schedules/firedNamespaces.js';
import { ConfigError } from '../errors.js';
import { appQueues } from './appQueues.js';
import { refuseHandlersOutsideApp } from './handlersOutsideApp.js';
import { appProblem, type WorkhorseApp } from './defineApp.js';
import { isThenable } from '../worker/configureWorker.js';

/**
 * `workers: [appWorker(app, { concurrency: 20 })]` in defineWorkerProcess.
 * The options win over what the app gives (`scheduleNamespaces: ['default']`
 * runs no `sys` slot in this process, say, when another process does).
 */
export function appWorker(app: WorkhorseApp, given: WorkerOptions = {}): WorkerSpec {
  checkArguments(app, given);
  // An option given as undefined is not given: `{ scheduleNamespaces: undefined }` replaced the app's with none.
  const options = Object.fromEntries(Object.entries(given).filter(([, v]) => v !== undefined)) as WorkerOptions;
  const scheduleNamespaces = options.scheduleNamespaces ?? tickScheduleNamespaces(app.schedules);
  // The outbox and the alerts belong to the sys slots: a process told not to run them leaves them to the one that does.
  const system = scheduleNamespaces.includes('sys');
  // The sys jobs are the system worker's (it runs beside this one), not this worker's queues.
  const served = appQueues(app, false);
  const queues = options.queue === undefined && options.queues === undefined && served.length > 0 ? { queues: served } : {};
  return {
    options: {
      ...queues,
      scheduleNamespaces,
      ...(app.schedules ? { schedules: app.schedules } : {}),
      ...(system && app.outbox ? { outbox: app.outbox } : {}),
      ...(system && app.alerts ? { alerts: app.alerts } : {}),
      ...options,
      // The app's queues only when the options name none, so never queue and queues both.
    } as WorkerOptions,
    configure: (worker) => {
      const r: unknown = app.configure(worker);
      // One that returned a promise (or any thenable) is refused as such by the process (configureWorker.ts).
      if (!isThenable(r)) refuseHandlersOutsideApp(app, worker.types);
      return r as void;
    },
  };
}

/**
 * A plain JavaScript caller's `appWorker(null)` or `appWorker(app, 42)`,
 * or an app defineApp would refuse, is a ConfigError at once, not a
 * TypeError when the process starts.
 */
function checkArguments(app: unknown, options: unknown): void {
  const problem = appProblem(app);
  if (problem) throw new ConfigError(`appWorker: ${problem}`, [{ path: ['app'], message: problem }]);
  if (options !== undefined && (typeof options !== 'object' || options === null || Array.isArray(options))) {
    throw new ConfigError('appWorker: the options must be an object of Worker options, e.g. { concurrency: 20 }', [{ path: ['options'], message: 'expected an object' }]);
  }
}
