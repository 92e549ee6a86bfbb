// How a thrown value is stored as a job's last_error and in the attempts
// ledger: a plain JSON object that survives any thrown value.

export interface StoredError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
}

export function errorToJson(err: unknown): StoredError {
  if (err instanceof Error) {
    const out: StoredError = { name: err.name, message: err.message };
    const code = (err as { code?: unknown }).code;
    if (typeof code === 'string') out.code = code;
    if (err.stack) out.stack = err.stack.split('\n').slice(0, 12).join('\n');
    return out;
  }
  return { name: 'NonError', message: typeof err === 'string' ? err : safeString(err) };
}

function safeString(v: unknown): string {
  try {
    return JSON.stringify(v) ?? String(v);
  } catch {
    return String(v);
  }
}

/**
 * An error that must not be retried: throw it (or any error with
 * `retryable === false`) from a handler to end the job `failed` at once.
 */
export class PermanentJobError extends Error {
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'PermanentJobError';
  }
}

export function isRetryable(err: unknown): boolean {
  return !(typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === false);
}
