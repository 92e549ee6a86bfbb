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
