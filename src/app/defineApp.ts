// A workhorse app: the one module a user writes to describe their jobs and
// bind their handlers. The same app value feeds a long-lived worker, the
// Lambda tick handler, the HTTP app (which validates enqueues against the
// job definitions) and the CDK construct (which bundles it). defineApp
// checks it with zod when the module loads, and its schedules against its
// jobs (schedules/appSchedules.ts): a bad value is a ConfigError naming the
// field, not a failure at the first tick or request.
import * as z from 'zod';
import { alertsOptionsSchema, type AlertsOptions } from '../alerts/alertsOptions.js';
import { isJobDefinition, type JobDefinition } from '../client/defineJob.js';
import { ConfigError } from '../errors.js';
import { outboxOptionsSchema, type OutboxOptions } from '../outbox/outboxOptions.js';
import { parseConfig } from '../validation.js';
import { refuseAsyncConfigure } from '../worker/configureWorker.js';
import { checkAppSchedules } from '../schedules/appSchedules.js';
import { isScheduleDefinition, type ScheduleDefinition } from '../schedules/defineSchedule.js';
import type { WorkerBase } from '../worker/workerBase.js';

export interface WorkhorseApp {
  /** Every job type this service enqueues or handles. */
  jobs: JobDefinition[];
  /**
   * Binds handlers: `worker.handle(SendEmail, async (payload, ctx) => …)`.
   * A long-lived process passes its Worker; a tick passes a WorkerBase,
   * the same but for run() (the tick pass drives it).
   */
  configure(worker: WorkerBase): void;
  /** Recurring slots (defineSchedule values); ticks and schedule runners store them at start. */
  schedules?: ScheduleDefinition[];
  /** Where the outbox delivers (ticks that fire the `sys` slots run sys.outbox with these sinks); `{ lifecycle: [] }` alone turns job lifecycle events off. */
  outbox?: OutboxOptions;
  /** The sys.alerts cadence and threshold overrides (ticks that fire the `sys` slots evaluate them). */
  alerts?: AlertsOptions;
}

const appSchema = z
  .object({
    jobs: z.array(z.custom<JobDefinition>(isJobDefinition, 'a job must be a defineJob() value')),
    configure: z.custom<WorkhorseApp['configure']>((v) => typeof v === 'function', 'configure must be a function (worker) => void'),
    schedules: z.array(z.custom<ScheduleDefinition>(isScheduleDefinition, 'a schedule must be a defineSchedule() value')).optional(),
    outbox: outboxOptionsSchema.optional(),
    alerts: alertsOptionsSchema.optional(),
  })
  .strict();

/** Two different definitions under one name would shadow each other; the same one twice is harmless. */
function refuseDuplicates(what: string, field: string, entries: [name: string, value: unknown][]): void {
  const seen = new Map<string, unknown>();
  entries.forEach(([name, value], i) => {
    if (seen.has(name) && seen.get(name) !== value) {
      const message = `two different ${what}s are named "${name}"`;
      throw new ConfigError(`invalid app: ${field}.${i}: ${message}`, [{ path: [field, i], message }]);
    }
    seen.set(name, value);
  });
}

/** Keys of `A` that an app does not have: each typed `never`, so a typo (`schedule:` for `schedules:`) fails to compile, not only at load. */
type NoExtraKeys<A> = { [K in Exclude<keyof A, keyof WorkhorseApp>]: never };

/** Apps that passed defineApp's checks: a tick, an appWorker or the HTTP app given one checks it no more. */
const checked = new WeakSet<object>();

/** defineApp's checks: a ConfigError naming the field. */
function checkApp(app: WorkhorseApp): void {
  const parsed = parseConfig(appSchema, app, 'app');
  refuseAsyncConfigure(app.configure, 'app');
  refuseDuplicates('job definition', 'jobs', parsed.jobs.map((j) => [j.type, j]));
  checkAppSchedules(parsed.schedules ?? [], parsed.jobs);
  checked.add(app);
}

/** Checks the app (a ConfigError naming the field) and returns it unchanged. */
export function defineApp<A extends WorkhorseApp>(app: A & NoExtraKeys<A>): A & Pick<WorkhorseApp, 'schedules' | 'outbox' | 'alerts'> {
  checkApp(app);
  return app;
}

/**
 * What is wrong with a value given where an app is expected (a tick's,
 * an appWorker's or the HTTP app's `app`): not an app at all, or an app
 * defineApp would refuse (its message without "invalid app: "). The type
 * `WorkhorseApp` is exported, so a hand-made object compiles; its bad
 * schedule or job failed later as a bare TypeError. Undefined for a valid app.
 */
export function appProblem(v: unknown): string | undefined {
  if (typeof v === 'object' && v !== null && checked.has(v)) return undefined;
  try {
    if (!isWorkhorseApp(v)) return 'the app must be a defineApp({ jobs, configure }) value';
    checkApp(v);
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err.message.replace(/^invalid app: /, '');
    return `reading the app threw (${err instanceof Error ? err.message : String(err)}); pass the value defineApp() returned`;
  }
}

/** The one check that a value is an app: jobs to define and a configure function. */
export function isWorkhorseApp(v: unknown): v is WorkhorseApp {
  return typeof v === 'object' && v !== null && Array.isArray((v as WorkhorseApp).jobs) && typeof (v as WorkhorseApp).configure === 'function';
}
