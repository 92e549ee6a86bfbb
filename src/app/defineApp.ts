// A workhorse app: the one module a user writes to describe their jobs and
// bind their handlers. The same app value feeds a long-lived worker, the
// Lambda tick handler, the HTTP app (which validates enqueues against the
// job definitions) and the CDK construct (which bundles it).
import type { AlertsOptions } from '../alerts/alertsOptions.js';
import type { JobDefinition } from '../client/defineJob.js';
import type { OutboxOptions } from '../outbox/outboxOptions.js';
import type { ScheduleDefinition } from '../schedules/defineSchedule.js';
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
  /** Where the outbox delivers (ticks that fire the `sys` slots run sys.outbox with these sinks). */
  outbox?: OutboxOptions;
  /** The sys.alerts cadence and threshold overrides (ticks that fire the `sys` slots evaluate them). */
  alerts?: AlertsOptions;
}

export function defineApp<A extends WorkhorseApp>(app: A): A {
  return app;
}

/** The one check that a value is an app: jobs to define and a configure function. */
export function isWorkhorseApp(v: unknown): v is WorkhorseApp {
  return typeof v === 'object' && v !== null && Array.isArray((v as WorkhorseApp).jobs) && typeof (v as WorkhorseApp).configure === 'function';
}
