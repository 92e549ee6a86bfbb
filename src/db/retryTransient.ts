// Capped exponential backoff with jitter for protocol calls that are safe to
// repeat under the fence (claim, heartbeat, settle, deregister, the start-up
// schema check). Only database faults are retried (see transient.ts), plus
// whatever a caller's `alsoRetry` accepts (a settlement's cancelled
// statement); any other error is thrown at once. A stop signal ends the
// waiting.
import { isTransientDbError } from './transient.js';

export interface BackoffOptions {
  baseMs?: number;
  maxMs?: number;
}

/** Delays of 1x, 2x, 4x ... the base, capped, each with up to ±25 % jitter. */
export class Backoff {
  private failures = 0;
  private readonly baseMs: number;
  private readonly maxMs: number;

  constructor(o: BackoffOptions = {}) {
    this.baseMs = o.baseMs ?? 100;
    this.maxMs = o.maxMs ?? 10_000;
  }

  get attempts(): number {
    return this.failures;
  }

  /** The delay before the next try. */
  next(): number {
    const raw = Math.min(this.maxMs, this.baseMs * 2 ** Math.min(this.failures, 30));
    this.failures++;
    return Math.round(raw * (0.75 + Math.random() * 0.5));
  }

  reset(): void {
    this.failures = 0;
  }
}

/** Resolves after `ms`, or at once when the signal aborts. */
export function pause(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const done = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

export interface RetryOptions extends BackoffOptions {
  /** Gives up (rethrowing the last error) once aborted. */
  signal?: AbortSignal;
  /** Tries at most this many times (default: until the signal aborts). */
  attempts?: number;
  /** Retries these errors too, besides database faults (asked once per failure that is not a fault). */
  alsoRetry?: (err: unknown) => boolean;
  /** Ends the retries on these errors, database faults among them (the client's refusals an operator must end, at start-up). */
  stopOn?: (err: unknown) => boolean;
  /** Called after each failure that will be retried, with the delay. */
  onRetry?: (err: unknown, delayMs: number, attempt: number) => void;
}

export async function retryTransient<T>(fn: () => Promise<T>, o: RetryOptions = {}): Promise<T> {
  const backoff = new Backoff(o);
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(isTransientDbError(err) || o.alsoRetry?.(err)) || o.stopOn?.(err) || o.signal?.aborted) throw err;
      if (o.attempts !== undefined && backoff.attempts + 1 >= o.attempts) throw err;
      const delay = backoff.next();
      o.onRetry?.(err, delay, backoff.attempts);
      await pause(delay, o.signal);
      if (o.signal?.aborted) throw err;
    }
  }
}
