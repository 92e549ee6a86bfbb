// The plain steps (ctx.step) of one run that have started and whose record
// is not written yet. A handler may leave one running when a wait suspends
// the job (`Promise.all([ctx.waitForSignal('a'), ctx.step('b', ...)])`, or a
// step started before a wait and awaited after it): the suspension released
// the lease under it, its record was refused, the body ran again on the
// replay, and the refusal, which nobody awaited any more, ended the worker
// process as an unhandled rejection. The suspension now waits for them (see
// invokeHandler.ts), and every tracked step's rejection is handled here, so
// one the handler no longer awaits cannot end the process; so are a
// transactional step's and a wait's, progress's and a spawn's (dropped()),
// which rejected unhandled when the handler had stopped awaiting them (a
// txStep started before a wait, a call left running past the handler's
// return). And a step's name runs once per job: two calls of a name at once
// (a Promise.all) both ran their body; the second now gets the first's
// result or error (run()). A call of a name whose body is running is
// refused instead: the body calling a step of its own name waited for
// itself, and the job hung until its timeout or for ever.
import { ValidationError } from '../errors.js';
import type { JobAbort } from './jobAbort.js';

export class StepsInFlight {
  private readonly running = new Set<Promise<unknown>>();
  /** The steps in flight by name. */
  private readonly byName = new Map<string, Promise<unknown>>();
  /** The names whose body (the handler's fn) is running now. */
  private readonly inBody = new Set<string>();

  /**
   * Starts step `name` with `start`, tracked, unless a step of that name is
   * in flight: then it is that step's promise (its result or its error),
   * or, while that step's body runs, a ValidationError (`what` names it).
   */
  run<T>(name: string, what: string, start: () => Promise<T>): Promise<T> {
    const inFlight = this.byName.get(name);
    if (inFlight && this.inBody.has(name)) {
      return dropped(
        Promise.reject(
          new ValidationError(
            `${what} was called while the body of a step of that name runs: a name runs once per job, and a step whose body calls a step of its own name would wait for itself. Give the inner step a name of its own`,
          ),
        ),
      );
    }
    if (inFlight) return inFlight as Promise<T>;
    const step = this.track(start());
    this.byName.set(name, step);
    const done = () => void (this.byName.get(name) === step && this.byName.delete(name));
    step.then(done, done);
    return step;
  }

  /** Runs `body`, the step `name`'s own function, marked as running (run() refuses its name meanwhile). */
  async body<T>(name: string, body: () => Promise<T> | T): Promise<T> {
    this.inBody.add(name);
    try {
      return await body();
    } finally {
      this.inBody.delete(name);
    }
  }

  /** Tracks `step` until it settles; returns it unchanged (the handler still sees its rejection). */
  track<T>(step: Promise<T>): Promise<T> {
    this.running.add(step);
    const done = () => void this.running.delete(step);
    step.then(done, done);
    return step;
  }

  /**
   * Settles once no tracked step is running, or once the job is aborted
   * (its timeout, a lost lease, a hard stop): a step that never ends must
   * not hold the job's lease for ever. Uses the abort's one hook: call it
   * only after the run's own wait on the handler is over.
   */
  async settled(abort: JobAbort): Promise<void> {
    if (this.running.size === 0 || abort.aborted) return;
    await new Promise<void>((resolve) => {
      abort.onAbort(() => resolve());
      const next = (): void => {
        if (this.running.size === 0) resolve();
        else void Promise.allSettled([...this.running]).then(next);
      };
      next();
    });
    abort.onAbort(undefined);
  }
}

/**
 * `p`, with its rejection marked handled: a context call the handler does
 * not await (one it left running when it returned, or one started before a
 * wait and awaited after it) fails without an unhandled rejection, which
 * would end the worker process. A handler that awaits it still gets the error.
 */
export function dropped<T>(p: Promise<T>): Promise<T> {
  p.catch(() => undefined);
  return p;
}
