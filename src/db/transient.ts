// Which failures are database faults worth waiting out: a refused or reset
// connection, a server shutting down or starting up, a terminated backend,
// a failover's DNS change, a server that is (now) a read-only standby, too
// many clients, a database closed to new connections for a while, a
// serialisation conflict, and
// the timeouts workhorse itself puts on connections and protocol calls
// (a pool with no free connection within its connect timeout included).
// Anything else (a constraint, a bad argument, a schema mismatch) is a real
// error and is reported at once.
import { DatabaseUnavailableError } from '../errors.js';
import { REINSTALLED_MESSAGES } from './faultHint.js';

/** SQLSTATEs that say "try again": server going away or coming up, no room, lost race. */
const TRANSIENT_SQLSTATES = new Set([
  '57P01', // admin_shutdown (pg_terminate_backend, fast shutdown)
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now (starting up, in recovery)
  '53300', // too_many_connections
  // read_only_sql_transaction: a connection that reached a standby (the old
  // primary after a switchover, a DNS name not yet moved by a failover), or
  // that began while the database was set read-only. GuardedDb destroys
  // the connection it failed on, so the retry connects afresh.
  '25006',
  '40001', // serialization_failure
  '40P01', // deadlock_detected
]);

const TRANSIENT_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

const TRANSIENT_MESSAGES = [
  'connection terminated',
  'terminating connection',
  'timeout expired',
  'not queryable',
  'connection timeout',
  'timeout exceeded when trying to connect', // pg-pool: no free connection within connectionTimeoutMillis
  'query read timeout', // pg: no answer within the pool's query_timeout
  'the database system is starting up',
  'the database system is shutting down',
  // 55000 at login: the database is closed to new connections for a while (ALTER DATABASE ... ALLOW_CONNECTIONS false).
  'is not currently accepting connections',
  // A call that ran while `workhorse migrate` reinstalled the functions it uses (faultHint.ts).
  ...REINSTALLED_MESSAGES,
];

export function isTransientDbError(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  if (typeof err !== 'object' || err === null) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string') {
    if (TRANSIENT_SQLSTATES.has(code) || TRANSIENT_NODE_CODES.has(code) || code.startsWith('08')) return true;
  }
  if (err instanceof AggregateError && err.errors.some(isTransientDbError)) return true;
  const message = err instanceof Error ? err.message.toLowerCase() : '';
  return TRANSIENT_MESSAGES.some((m) => message.includes(m));
}

/** One line for a log: the message and the code, never a stack. */
export function describeDbError(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // A fault the client wrapped (a connection it could not make) is named by its cause's code, when it has one.
  const causeCode = err instanceof DatabaseUnavailableError ? (err.cause as { code?: unknown } | undefined)?.code : undefined;
  const code = typeof causeCode === 'string' ? causeCode : (err as { code?: unknown }).code;
  const inner = err instanceof AggregateError && err.errors[0] instanceof Error ? `: ${(err.errors[0] as Error).message}` : '';
  return `${err.message || err.name}${inner}${typeof code === 'string' ? ` (${code})` : ''}`;
}
