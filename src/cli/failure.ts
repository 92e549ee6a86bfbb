// How a failed command is reported: one line `workhorse <command>: <what>`
// (the stack only with --verbose) and an exit code: 2 for a usage or
// configuration problem (bad arguments, bad environment, a missing module),
// 1 for a runtime failure (the database does not answer, its schema is not
// migrated, a handler module throws while loading).
import { faultHint } from '../db/faultHint.js';
import { ConfigError, DatabaseUnavailableError, SchemaVersionError, ValidationError } from '../errors.js';
import { terminalSafe } from '../terminalText.js';
import { UsageError } from './usageError.js';

const NETWORK_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ECONNRESET']);

export function exitCodeFor(err: unknown): 1 | 2 {
  return err instanceof UsageError || err instanceof ConfigError || err instanceof ValidationError ? 2 : 1;
}

function codeOf(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function firstLine(err: unknown): string {
  // An AggregateError (every address of a host refused) has no message of its own.
  if (err instanceof AggregateError && !err.message) return [...new Set(err.errors.map(firstLine))].join('; ') || 'several errors';
  const message = err instanceof Error ? err.message : String(err);
  // A usage error is one line of the CLI's own, but for the argument it quotes: a line feed there is escaped, not the end of the reason.
  if (err instanceof UsageError) return terminalSafe(message).trim() || 'unknown error';
  return (message.split('\n')[0] ?? '').trim() || codeOf(err) || 'unknown error';
}

/**
 * pg's messages (they carry no code) for a connection that never got past
 * the startup: the server closed it (not PostgreSQL on that port?) or did
 * not answer within the connect timeout.
 */
const UNREACHABLE_MESSAGES = /^(?:Connection terminated unexpectedly|Connection terminated due to connection timeout|timeout exceeded when trying to connect)$/;

/** One line saying what failed, and what to do when an operator can fix it (a dropped function: `workhorse migrate`). */
export function describeFailure(err: unknown): string {
  const line = firstLine(err);
  const hint = err instanceof SchemaVersionError ? undefined : faultHint(err);
  // A message that says it already (a tick's failure carries its refusal's hint) does not say it twice.
  if (hint) return line.includes(hint) ? line : `${line}; ${hint}`;
  // A connection the client could not make is a DatabaseUnavailableError with the network error as its cause.
  const source = err instanceof DatabaseUnavailableError && err.cause ? err.cause : err;
  const code = codeOf(source) ?? (source instanceof AggregateError ? codeOf(source.errors[0]) : undefined);
  return (code && NETWORK_CODES.has(code)) || UNREACHABLE_MESSAGES.test(line) ? `cannot reach the database: ${line}` : line;
}

/** The line to print: `workhorse <command>: <what>`, never the prefix twice. */
export function failureLine(command: string | undefined, err: unknown): string {
  const prefix = command ? `workhorse ${command}: ` : 'workhorse: ';
  let what = describeFailure(err);
  while (what.startsWith(prefix)) what = what.slice(prefix.length);
  return prefix + what;
}
