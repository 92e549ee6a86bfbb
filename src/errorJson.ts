// How a thrown value is stored as a job's last_error and in the attempts
// ledger: a plain JSON object that survives any thrown value. Reading a
// thrown value can itself throw (a getter, a Proxy, an object without a
// prototype that String() cannot convert), and its text may hold what
// PostgreSQL's jsonb refuses (NUL, a lone surrogate), so every field is read
// guarded and cleaned: storing an error never throws and never poisons the
// settlement batch it is written in.
import { WorkhorseError } from './errors.js';
import { textProblem } from './storable.js';

export interface StoredError {
  name: string;
  message: string;
  code?: string;
  stack?: string;
}

/** Longest message or stack kept; a longer one is cut (an error is a diagnosis, not a payload). */
export const MAX_ERROR_TEXT = 8192;

export function errorToJson(err: unknown): StoredError {
  try {
    if (err instanceof Error) {
      const out: StoredError = { name: clean(read(() => err.name, 'Error')), message: clean(read(() => err.message, '')) };
      const code = read(() => (err as { code?: unknown }).code, undefined);
      if (typeof code === 'string') out.code = clean(code);
      const stack = read(() => err.stack, undefined);
      if (typeof stack === 'string' && stack) out.stack = clean(storedStack(stack));
      return out;
    }
    return { name: 'NonError', message: clean(typeof err === 'string' ? err : safeString(err)) };
  } catch {
    return { name: 'NonError', message: 'a thrown value that could not be read' };
  }
}

/**
 * A stack as stored: its frames whole (cut with the rest at MAX_ERROR_TEXT),
 * its header, which repeats the message, cut to its first line when it
 * spans several. Stacks were cut to 12 lines, so a message of many lines (a
 * ZodError lists its issues) left no frame at all.
 */
function storedStack(stack: string): string {
  const lines = stack.split('\n');
  const firstFrame = lines.findIndex((l) => /^\s+at /.test(l));
  if (firstFrame < 1) return stack;
  // The header's first line is cut too: a one-line message of 9,000 characters left no room for a frame.
  const head = lines[0]!.length > MAX_STACK_HEADER ? `${lines[0]!.slice(0, MAX_STACK_HEADER)}…` : lines[0]!;
  const more = firstFrame - 1;
  return [more > 0 ? `${head} …(${more} more line${more === 1 ? '' : 's'} of the message)` : head, ...lines.slice(firstFrame)].join('\n');
}

/** The longest first line of a stored stack's header (the message keeps all of it, up to MAX_ERROR_TEXT). */
const MAX_STACK_HEADER = 1000;

/** A field's value as text; a getter that throws gives the fallback. */
function read<T>(get: () => unknown, fallback: T): string | T {
  try {
    const v = get();
    if (v === undefined || v === null) return fallback;
    return typeof v === 'string' ? v : safeString(v);
  } catch {
    return fallback;
  }
}

function safeString(v: unknown): string {
  try {
    const json = JSON.stringify(v);
    if (json !== undefined) return json;
  } catch {
    // a cycle, a BigInt inside, a throwing toJSON: fall through
  }
  try {
    return String(v);
  } catch {
    return Object.prototype.toString.call(v);
  }
}

/** Text jsonb can store: NUL and lone surrogates become U+FFFD, and it is cut to MAX_ERROR_TEXT characters, its "…" included. */
function clean(s: string): string {
  let out = s.length > MAX_ERROR_TEXT ? `${s.slice(0, MAX_ERROR_TEXT - 1)}…` : s;
  if (textProblem(out)) out = out.replace(/\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
  return out;
}

/**
 * A thrown value every later check can look at: one whose prototype cannot
 * even be read (a revoked Proxy) would make `instanceof` throw during the
 * settlement and end the worker process, so it becomes an Error saying so.
 */
export function readableThrown(err: unknown): unknown {
  try {
    void (err instanceof Object);
    return err;
  } catch {
    return new Error('the handler threw a value that cannot be read (its prototype is unreadable, e.g. a revoked Proxy)');
  }
}

/**
 * An error that must not be retried: throw it (or any error with
 * `retryable === false`) from a handler to end the job `failed` at once.
 */
export class PermanentJobError extends WorkhorseError {
  readonly retryable = false;
  constructor(message: string, options?: { cause?: unknown }) {
    super('permanent_failure', message, options);
  }
}

export function isRetryable(err: unknown): boolean {
  try {
    return !(typeof err === 'object' && err !== null && (err as { retryable?: unknown }).retryable === false);
  } catch {
    return true; // a retryable getter that throws: the job's retry policy applies
  }
}
