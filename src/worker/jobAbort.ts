// The abort switch of one running job. Aborts come from the job's timeout,
// a lost lease, a hard stop or a tick's deadline. An AbortController (and
// its signal) is made only when the handler reads ctx.signal: at thousands
// of jobs a second, one controller and its listeners per job were a tenth
// of the worker's CPU. The worker's own wait on the handler uses the single
// `onAbort` hook instead.

export class JobAbort {
  aborted = false;
  reason: unknown = undefined;
  private controller: AbortController | undefined;
  private hook: ((reason: unknown) => void) | undefined;

  /** The handler's AbortSignal, made on first use (already aborted if the job was). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.hook?.(reason);
  }

  /** The one internal listener: called once, on abort. */
  onAbort(fn: ((reason: unknown) => void) | undefined): void {
    this.hook = fn;
  }
}

/**
 * `p`, or the abort's reason once `signal` is aborted, whichever comes
 * first: a handler's database call against a frozen server gives the
 * handler back its abort (a timeout, a lost lease) at once instead of when
 * the call's own bound ends. The call itself still ends by that bound.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
