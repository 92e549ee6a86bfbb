// What a sink's failure says in an event's last error, which is all an
// operator reading the outbox has to go on. A network failure under fetch is
// "fetch failed" with the reason in its cause (ECONNREFUSED, ENOTFOUND, a
// TLS error, a reset), and an AWS SDK error keeps its type and HTTP status
// apart from its message ("Rate Exceeded." from a 429
// TooManyRequestsException): each is written into the text.
import { errorToJson } from '../errorJson.js';

const GENERIC_NAMES = new Set(['Error', 'NonError', 'TypeError', 'RangeError', 'AbortError', 'TimeoutError', 'SinkRetryAfterError']);

/** `TooManyRequestsException, HTTP 429: Rate Exceeded.`, `fetch failed (connect ECONNREFUSED 127.0.0.1:9)`. */
export function sinkFailureText(reason: unknown): string {
  const stored = errorToJson(reason);
  // A type of its own (an AWS error's, TooManyRequestsException), not a generic one.
  const name = !GENERIC_NAMES.has(stored.name) && !stored.message.includes(stored.name) ? stored.name : undefined;
  const status = httpStatusOf(reason);
  const label = [name, status === undefined ? undefined : `HTTP ${status}`].filter(Boolean).join(', ');
  const cause = causeText(reason);
  return `${label ? `${label}: ` : ''}${stored.message}${cause ? ` (${cause})` : ''}`;
}

/** An AWS SDK error's `$metadata.httpStatusCode`. */
function httpStatusOf(reason: unknown): number | undefined {
  try {
    const status = (reason as { $metadata?: { httpStatusCode?: unknown } } | null)?.$metadata?.httpStatusCode;
    return typeof status === 'number' ? status : undefined;
  } catch {
    return undefined;
  }
}

/** The first cause's code and message, when the error's own message does not already say them. */
function causeText(reason: unknown): string | undefined {
  try {
    const cause = (reason as { cause?: unknown } | null)?.cause;
    if (cause === undefined || cause === null) return undefined;
    const c = errorToJson(cause);
    // An AggregateError of several addresses (localhost's ::1 and 127.0.0.1) has no message, only its code.
    const text = c.message || c.code || '';
    if (text === '' || errorToJson(reason).message.includes(text)) return undefined;
    return c.code && !text.includes(c.code) ? `${c.code}: ${text}` : text;
  } catch {
    return undefined;
  }
}
