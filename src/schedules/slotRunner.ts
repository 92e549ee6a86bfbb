// The long-lived way to run recurring slots: a small companion loop beside a
// worker. Every `intervalMs` it leases the due slots of the schedule
// namespaces it opted into and fires them (two short statements, none when
// nothing is due). With the `sys` namespace it also runs a small system
// worker on the `sys` queue for the built-in sys.* jobs, which its caller
// (the worker layer, above this one) starts for it. Every runner is a peer:
// whichever claims a slot fires it, once per cadence. A pass that fails
// (a database fault) is tried again with capped backoff, and the fault is
// logged once when it begins and once when it ends (faultSpell.ts), for the
// runner, its system worker and its outbox pump each.
import * as z from 'zod';
import type { Client } from '../client/client.js';
import { GuardedDb } from '../db/guardedDb.js';
import { defaultWorkerId, workerIdSchema } from '../names.js';
import { parseConfig } from '../validation.js';
import { ConfigError } from '../errors.js';
import { scheduleNamespaceSchema, type ScheduleDefinition } from './defineSchedule.js';
import { fireClaimedSlots } from './fireSlots.js';
import { checkScheduleJobs, jobAsType, refuseNameTwinsIssue } from './appSchedules.js';
import { assertClient } from '../client/notAClient.js';
import { refuseUnfiredSchedules } from './firedNamespaces.js';
import { SYSTEM_SCHEDULE_NAMESPACE, type RetentionOptions } from './retention.js';
import { toScheduleRow } from './scheduleRow.js';
import { Backoff } from '../db/retryTransient.js';
import { faultReporter, type FaultReport, type FaultReporter } from '../faultSpell.js';
import { systemSchedules, type SystemSlotConfig } from './systemSchedules.js';

/** The shortest pass interval a runner takes. */
export const MIN_RUNNER_INTERVAL_MS = 100;

const runnerOptionsSchema = z
  .object({
    /** The schedule namespaces whose slots this runner fires (`sys` = the built-in slots). */
    scheduleNamespaces: z.array(scheduleNamespaceSchema).min(1),
    /** At most this many missed cadences of one slot fire at once (the most recent). */
    scheduleCatchupLimit: z.number().int().min(1).max(1000).default(1),
    intervalMs: z.number().int().min(MIN_RUNNER_INTERVAL_MS).max(3_600_000).default(5000),
    /** Slots one pass leases at most. */
    slotLimit: z.number().int().min(1).max(1000).default(100),
    /** Schedules to create or update at start (e.g. the app's). */
    schedules: z.array(z.custom<ScheduleDefinition>((v) => typeof v === 'object' && v !== null && 'name' in v)).default([]),
    /** Settings of the built-in sys.retention slot (with the `sys` namespace). */
    retention: z.custom<RetentionOptions>((v) => typeof v === 'object' && v !== null).default({}),
    /** The sys.outbox and sys.alerts configuration (parsed), with the `sys` namespace. */
    system: z.custom<SystemSlotConfig>((v) => typeof v === 'object' && v !== null).default({}),
    workerId: workerIdSchema.optional(),
    onError: z.custom<(err: unknown) => void>((v) => typeof v === 'function').optional(),
  })
  .strict()
  .superRefine((o, ctx) => {
    refuseUnfiredSchedules(o.schedules, o.scheduleNamespaces, 'schedule runner', ctx);
    refuseNameTwinsIssue(o.schedules, ctx);
  });

/**
 * Each statement of the runner (storing the schedules, a pass's claim and
 * fire) may take this long before its connection is destroyed: against a
 * hung server a pass would otherwise never end, and a stop waits for the
 * pass in flight. A pass cut short is harmless: its slots stay leased until
 * their claim lease ends, and a fire is fenced by the slot's expected due
 * time and each cadence's dedupe key.
 */
const CALL_TIMEOUT_MS = 10_000;

const STOPPED_RUNNER = 'this ScheduleRunner was stopped, and a runner runs once: create another (new ScheduleRunner(client, options)) to run again';
/** A failed pass is tried again after the interval, doubled per failure up to this (or the interval, if longer). */
const PASS_BACKOFF_MAX_MS = 10_000;

export type ScheduleRunnerOptions = z.input<typeof runnerOptionsSchema>;

/** Where the system worker reports its failures (`worker`), and its outbox pump (`outbox`). */
export interface SystemFaults {
  worker: FaultReport;
  outbox: FaultReport;
}

/** Starts the one-slot worker on the `sys` queue that runs the sys.* jobs; returns how to stop it. */
export type SystemWorkerStarter = (
  workerId: string,
  pollMs: number,
  faults: SystemFaults,
  system: SystemSlotConfig,
) => { stop(hard?: boolean): Promise<void> };

export class SlotRunner {
  private readonly o: z.output<typeof runnerOptionsSchema>;
  private readonly workerId: string;
  private timer: NodeJS.Timeout | undefined;
  private pass: Promise<unknown> | undefined;
  private stopped = false;
  private startedOnce = false;
  private starting: Promise<void> | undefined;
  /** The slots this runner stored at start: of the declared slots, the only ones it fires. */
  private declared: string[] = [];
  private systemWorker: { stop(hard?: boolean): Promise<void> } | undefined;
  private readonly db: GuardedDb;
  private readonly backoff: Backoff;
  /** This runner's passes, and the system worker it starts (which has no success of its own to report: a pass that works ends its fault). */
  private readonly faults: { passes: FaultReport; systemWorker: FaultReport; outbox: FaultReport };

  /** `reporter`: where the faults go (a worker's); by default onError, else one line per fault under `[workhorse] schedule runner:`. */
  constructor(
    private readonly client: Client,
    options: ScheduleRunnerOptions,
    private readonly startSystemWorker: SystemWorkerStarter,
    reporter?: FaultReporter,
  ) {
    assertClient(client, 'a ScheduleRunner');
    this.o = parseConfig(runnerOptionsSchema, options, 'schedule runner options');
    // A schedule its client cannot store fails here, not when start() stores it.
    checkScheduleJobs(this.o.schedules, jobAsType, (t) => client.definition(t), client.maxPayloadBytes, 'schedule runner options');
    this.workerId = this.o.workerId ?? `schedules:${defaultWorkerId()}`;
    this.db = new GuardedDb(client.pool, { timeoutMs: CALL_TIMEOUT_MS });
    this.backoff = new Backoff({ baseMs: this.o.intervalMs, maxMs: Math.max(this.o.intervalMs, PASS_BACKOFF_MAX_MS) });
    const report = reporter ?? faultReporter('[workhorse] schedule runner:', () => this.o.onError);
    this.faults = { passes: report('schedules'), systemWorker: report('system worker'), outbox: report('outbox') };
  }

  private get withSystem(): boolean {
    return this.o.scheduleNamespaces.includes(SYSTEM_SCHEDULE_NAMESPACE);
  }

  /**
   * Stores the configured schedules, starts the loop (and the system
   * worker). Once: a second start would run a second loop, and one after
   * stop() stored the schedules and never fired them.
   */
  start(): Promise<void> {
    if (this.startedOnce) return Promise.reject(new ConfigError(this.stopped ? STOPPED_RUNNER : 'this ScheduleRunner was started already: start() runs it until stop()'));
    this.startedOnce = true;
    // A start that failed (the database not up yet) may be tried again; one that worked may not.
    this.starting = this.startOnce().catch((err: unknown) => {
      if (!this.stopped) this.startedOnce = false;
      throw err;
    });
    return this.starting;
  }

  private async startOnce(): Promise<void> {
    await this.client.ready();
    const defs = [...this.o.schedules, ...(this.withSystem ? systemSchedules(this.o.retention, this.o.system) : [])];
    // A cron slot's first run comes from the database's clock, not this machine's (which may run ahead).
    const now = await this.client.protocol.databaseNow(this.db);
    const rows = defs.map((d) => ({ ...toScheduleRow(d, (t) => this.client.definition(t), this.client.maxPayloadBytes, now), declared: true }));
    await this.client.protocol.upsertSchedules(this.db, this.client.namespace, rows);
    this.declared = rows.map((r) => r.name);
    const lifecycle = this.withSystem ? this.o.system.lifecycle : undefined;
    if (lifecycle) await this.client.protocol.setOutboxLifecycle(this.db, this.client.namespace, lifecycle);
    // Stopped while it stored them (a SIGTERM during start-up): nothing more starts.
    if (this.stopped) return;
    if (this.withSystem) {
      this.systemWorker = this.startSystemWorker(`${this.workerId}:sys`, this.o.intervalMs, { worker: this.faults.systemWorker, outbox: this.faults.outbox }, this.o.system);
    }
    this.schedule(0);
  }

  /** One pass: lease the due slots and fire them. Returns the jobs created. */
  async runOnce(): Promise<number> {
    const { dbNow, slots } = await this.client.protocol.claimSlots(
      this.db,
      this.client.namespace,
      this.workerId,
      this.o.scheduleNamespaces,
      this.declared,
      this.o.slotLimit,
      Math.max(30_000, this.o.intervalMs * 4),
    );
    if (slots.length === 0 || !dbNow) return 0;
    return fireClaimedSlots(this.client.protocol, this.db, this.client.namespace, slots, dbNow, this.o.scheduleCatchupLimit, (e) =>
      this.faults.passes.failed(e),
    );
  }

  /** Stops the loop; waits for a pass in flight (bounded by its calls') while the system worker drains (`hard`: stops hard). */
  async stop(hard = false): Promise<void> {
    this.stopped = true;
    // A start still under way ends first (it starts nothing more once stopped), so what it started is stopped here.
    await this.starting?.catch(() => undefined);
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.all([this.pass, this.systemWorker?.stop(hard)]);
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pass = this.runOnce().then(
        () => {
          this.backoff.reset();
          this.faults.passes.ok();
          // The database answers this runner: a fault its system worker reported is over too.
          this.faults.systemWorker.ok();
          this.schedule(this.o.intervalMs);
        },
        (err: unknown) => {
          this.faults.passes.failed(err);
          this.schedule(this.backoff.next());
        },
      );
    }, delayMs);
    this.timer.unref();
  }
}
