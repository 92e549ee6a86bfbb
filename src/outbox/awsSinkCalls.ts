// How the AWS sinks call their service. One request per delivery attempt:
// the SDK's own retries (three requests by default) ran inside each attempt
// the outbox counts, so an event's attempts, its backoff and its dead
// letter counted a third of the requests a throttled service saw. And a
// service that asks for a pause (a 429 with Retry-After, Lambda's
// TooManyRequestsException with its retryAfterSeconds) has it honoured as a
// webhook's is: the failed error carries `retryAfterMs` (retryAfter.ts),
// its type and status kept for the event's last error (sinkFailure.ts).
import { parseRetryAfter } from './retryAfter.js';

/** The SDK client settings every AWS sink adds to its own: the outbox retries, not the SDK. */
export const ONE_REQUEST_PER_ATTEMPT = { maxAttempts: 1 } as const;

/** Runs one SDK call; its failure, rethrown, carries `retryAfterMs` when the service asked for a delay. */
export async function awsCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw withRetryAfter(err);
  }
}

function withRetryAfter(err: unknown): unknown {
  try {
    const e = err as { $response?: { headers?: Record<string, unknown> }; retryAfterSeconds?: unknown } | null;
    const header = e?.$response?.headers?.['retry-after'] ?? e?.retryAfterSeconds;
    const ms = parseRetryAfter(typeof header === 'string' ? header : typeof header === 'number' ? String(header) : null);
    if (ms !== undefined && typeof err === 'object' && err !== null) {
      Object.defineProperty(err, 'retryAfterMs', { value: ms, enumerable: false, configurable: true });
    }
  } catch {
    // An error whose fields throw when read is rethrown as it is.
  }
  return err;
}
