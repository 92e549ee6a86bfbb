// The control flow of a durable wait. A wait that is not satisfied yet
// cannot block the handler (the job must give up its lease and slot), so
// the context throws a JobSuspension: it unwinds the handler, and the
// worker suspends the job on that wait instead of settling it. A catch
// block in the handler sees it like any error and should rethrow it
// (`if (isSuspension(err)) throw err`); one that swallows it changes
// nothing: the context remembers that it suspended, every later context
// call throws the same suspension, and whatever the handler returns or
// throws afterwards is discarded. The job resumes by replaying the handler
// from the top, so code outside steps between two waits runs again.

export class JobSuspension extends Error {
  readonly jobId: string;
  /** The wait the job suspends on. */
  readonly wait: string;
  constructor(jobId: string, wait: string) {
    super(`job ${jobId} suspends on wait "${wait}" (workhorse control flow: rethrow it from catch blocks)`);
    this.name = 'JobSuspension';
    this.jobId = jobId;
    this.wait = wait;
  }
}

/**
 * Whether `err` is the control-flow signal of a durable wait (rethrow it).
 * Whatever a handler threw: `instanceof` itself throws for a revoked Proxy
 * (and runs a hostile Proxy's getPrototypeOf trap), which is no suspension.
 */
export function isSuspension(err: unknown): err is JobSuspension {
  try {
    return err instanceof JobSuspension;
  } catch {
    return false;
  }
}
