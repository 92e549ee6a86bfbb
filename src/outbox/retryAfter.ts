// A sink's "not before": a webhook receiver answering 429 or 503 with a
// Retry-After header, or a custom sink throwing SinkRetryAfterError. The
// failed event's next try waits at least that long (never longer than the
// outbox's backoff.maxMs, so a bogus header cannot park a key for days),
// where the backoff alone would try a receiver that asked for quiet again
// after a second. The delivery still counts as a failed attempt.
import { WorkhorseError } from '../errors.js';

/** A delivery that failed with the sink asking to be tried again no sooner than `retryAfterMs` from now. */
export class SinkRetryAfterError extends WorkhorseError {
  readonly retryAfterMs: number;
  constructor(message: string, retryAfterMs: number, options?: { cause?: unknown }) {
    super('sink_retry_after', message, options);
    this.retryAfterMs = retryAfterMs;
  }
}

/** The longest Retry-After read (a day); the outbox's backoff.maxMs caps it further when the retry is written. */
const MAX_RETRY_AFTER_MS = 86_400_000;

/**
 * Milliseconds a Retry-After header asks for (RFC 9110: delay-seconds, or an
 * HTTP-date); undefined when absent or unreadable. A date in the past is 0.
 */
export function parseRetryAfter(value: string | null, now = Date.now()): number | undefined {
  const v = value?.trim();
  if (!v) return undefined;
  if (/^\d+$/.test(v)) return Math.min(MAX_RETRY_AFTER_MS, Number(v) * 1000);
  // An HTTP-date names its weekday; a bare number with a sign or a fraction is no delay-seconds.
  if (!/^[A-Za-z]{3},/.test(v)) return undefined;
  const at = Date.parse(v);
  if (Number.isNaN(at)) return undefined;
  return Math.min(MAX_RETRY_AFTER_MS, Math.max(0, at - now));
}

/** The delay a sink's failure asks for: its `retryAfterMs` when it is a finite number of at least 0 (read guarded), else undefined. */
export function retryAfterOf(reason: unknown): number | undefined {
  try {
    const ms = (reason as { retryAfterMs?: unknown } | null | undefined)?.retryAfterMs;
    return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0 ? Math.min(MAX_RETRY_AFTER_MS, Math.ceil(ms)) : undefined;
  } catch {
    return undefined;
  }
}
