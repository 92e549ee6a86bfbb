// How a loop that retries on its own (a worker's schedule runner, its
// system worker, its outbox pump) logs a database fault: one line when the
// fault begins, naming the component and the error, one more for each other
// kind of error during it (at most MAX_KINDS in all), and one line when the
// component's next try works ("database reachable again after 6.2 s"), not
// one line per try. An `error` listener still hears every failure
// (reportError.ts); nothing is logged then. An error that is not a database
// fault (a bug, a slot whose cadence no longer parses) is logged each time,
// as src/carriedOn.ts does. Faults that come and go every few seconds are
// counted after the first, and the count logged at most every 30 s.
import { answeredByPostgres, logCarriedOn } from './carriedOn.js';
import { sqlStateOf } from './db/sqlState.js';
import { isTransientDbError } from './db/transient.js';

/** Kinds of error (SQLSTATE or error code) one fault logs at most, the first included. */
export const MAX_KINDS = 3;

/** A component's view of its own faults. */
export interface FaultReport {
  /**
   * A try failed. `begins` says what the component does about the fault in
   * the line that opens it (`the outcomes are kept and written again`);
   * by default `database fault; retrying with backoff`.
   */
  failed(err: unknown, begins?: string): void;
  /** A try worked: ends a fault in progress. */
  ok(): void;
}

/** Makes the FaultReport of a named component (`schedules`, `outbox`, `system worker`). */
export type FaultReporter = (component: string) => FaultReport;

/** A database fault, grouped by kind; anything else is reported each time. */
function faultKind(err: unknown): string | undefined {
  if (!(isTransientDbError(err) || answeredByPostgres(err))) return undefined;
  const code = sqlStateOf(err);
  if (typeof code === 'string') return code;
  return err instanceof Error ? err.name : 'fault';
}

/** What one component's failures and successes amount to: when a fault begins, gets a new kind of error, and ends. */
export class FaultSpell {
  private since: number | undefined;
  private tries = 0;
  private readonly kinds = new Set<string>();

  constructor(private readonly now: () => number = Date.now) {}

  get open(): boolean {
    return this.since !== undefined;
  }

  /** When the fault in progress began (undefined when none is). */
  get openedAt(): number | undefined {
    return this.since;
  }

  /** A failure: 'begins' (the first of a fault), 'new kind' (another kind of error during it), 'repeat' (nothing to say) or 'not a fault' (log it). */
  fail(err: unknown): 'begins' | 'new kind' | 'repeat' | 'not a fault' {
    const kind = faultKind(err);
    if (kind === undefined) return 'not a fault';
    this.tries++;
    if (this.since === undefined) {
      this.since = this.now();
      this.kinds.clear();
      this.kinds.add(kind);
      return 'begins';
    }
    if (this.kinds.has(kind) || this.kinds.size >= MAX_KINDS) return 'repeat';
    this.kinds.add(kind);
    return 'new kind';
  }

  /** A success: how long the fault that it ends lasted, and its failed tries; undefined when none was in progress. */
  succeed(): { ms: number; tries: number } | undefined {
    if (this.since === undefined) return undefined;
    const r = { ms: this.now() - this.since, tries: this.tries };
    this.since = undefined;
    this.tries = 0;
    return r;
  }
}

/**
 * Reports components' faults under `prefix` (`[workhorse] worker <id>:`):
 * every failure to `listener()` when it returns one (an `error` event),
 * otherwise one line when a fault begins (and per other kind of error,
 * MAX_KINDS at most) and one when it ends.
 */
export function faultReporter(prefix: string, listener: () => ((err: unknown) => void) | undefined, now: () => number = Date.now): FaultReporter {
  return (component) => {
    const spell = new FaultSpell(now);
    // Faults that come and go (a statement_timeout the calls sometimes beat, connection slots
    // sometimes free) opened and closed a fault every few seconds: two lines each, for as long as it
    // lasted. One that begins within FLAP_MS of the last one's end is counted instead, and the count
    // logged at most every FLAP_MS; a fault after FLAP_MS without one is logged as before.
    let lastEnd: number | undefined;
    let quiet = false;
    let flaps = 0;
    let flapsSince = 0;
    return {
      failed(err, begins = 'database fault; retrying with backoff') {
        const step = spell.fail(err);
        const heard = listener();
        if (heard) return heard(err);
        if (quiet && step !== 'begins' && step !== 'not a fault' && now() - spell.openedAt! >= LONG_FAULT_MS) {
          // A fault counted as one of many short ones that is lasting after all: logged as any fault.
          quiet = false;
          flaps = 0;
          logCarriedOn(prefix, err, `${component}: ${begins} (for ${Math.round((now() - spell.openedAt!) / 1000)} s now), logged again when it is over`);
          return;
        }
        if (step === 'begins') {
          const t = now();
          quiet = lastEnd !== undefined && t - lastEnd < FLAP_MS;
          if (!quiet) {
            flaps = 0;
            logCarriedOn(prefix, err, `${component}: ${begins}, logged again when it is over`);
            return;
          }
          if (flaps++ === 0) flapsSince = t;
          if (t - flapsSince >= FLAP_MS) {
            logCarriedOn(prefix, err, `${component}: database faults keep coming and going: ${flaps} in the last ${Math.round((t - flapsSince) / 1000)} s, each over within seconds (the latest)`);
            flaps = 0;
          }
        } else if (step === 'new kind' && !quiet) logCarriedOn(prefix, err, `${component}: another error during the same fault`);
        else if (step === 'not a fault') logCarriedOn(prefix, err, component);
      },
      ok() {
        const ended = spell.succeed();
        if (!ended || listener()) return;
        lastEnd = now();
        if (quiet) return;
        const tries = ended.tries === 1 ? '1 failed try' : `${ended.tries} failed tries`;
        console.error(`${prefix} ${component}: database reachable again after ${(ended.ms / 1000).toFixed(1)} s (${tries})`);
      },
    };
  };
}

/** A fault that begins this soon after the last one ended is counted, not logged (faultReporter)... */
export const FLAP_MS = 30_000;
/** ... unless it lasts this long. */
export const LONG_FAULT_MS = 10_000;

/** A FaultReport that hands every failure to `onError` and ignores successes (a caller that keeps its own count). */
export function eachFailure(onError: (err: unknown) => void): FaultReport {
  return { failed: onError, ok: () => undefined };
}
