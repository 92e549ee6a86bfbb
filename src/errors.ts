// Typed errors: every failure a caller can act on has its own class and a
// stable `code`, so HTTP, the CLI and user code can branch without parsing
// messages.

/**
 * The longest message a workhorse error carries. Messages name the input
 * they refuse (a job type, a key, an id), and an input can be megabytes: a
 * longer message keeps its start and its end and says how much was left out,
 * so a log line or an HTTP error body stays readable whatever was sent.
 */
export const MAX_ERROR_MESSAGE_CHARS = 2000;

function bounded(message: string): string {
  if (message.length <= MAX_ERROR_MESSAGE_CHARS) return message;
  const keep = (MAX_ERROR_MESSAGE_CHARS - 60) / 2;
  // Cut on whole code points: a lone surrogate would make the message invalid UTF-16 in JSON.
  const head = Array.from(message.slice(0, keep + 1)).slice(0, -1).join('');
  const tail = Array.from(message.slice(-keep - 1)).slice(1).join('');
  return `${head} …(${message.length - head.length - tail.length} characters left out)… ${tail}`;
}

/** Issues bounded like messages: an issue's message and path name the input too (an unknown key of 12,000 characters). */
function boundedIssues(issues: ValidationIssue[]): ValidationIssue[] {
  const long = (v: string | number) => typeof v === 'string' && v.length > MAX_ERROR_MESSAGE_CHARS;
  return issues.map((i) =>
    i.message.length > MAX_ERROR_MESSAGE_CHARS || i.path.some(long)
      ? { path: i.path.map((v) => (long(v) ? bounded(v as string) : v)), message: bounded(i.message) }
      : i,
  );
}

/** The base class of every error workhorse throws on purpose. */
export class WorkhorseError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(bounded(message), options);
    this.name = new.target.name;
    this.code = code;
  }
}

/** One problem found by validation, with the path of the offending field. */
export interface ValidationIssue {
  path: (string | number)[];
  message: string;
}

/** Bad input: nothing was written. `issues` carries zod's paths. */
export class ValidationError extends WorkhorseError {
  readonly issues: ValidationIssue[];
  constructor(message: string, issues: ValidationIssue[] = [], options?: { cause?: unknown }) {
    super('validation_failed', message, options);
    this.issues = boundedIssues(issues);
  }
}

/** A job type no `defineJob` registered with this client. */
export class UnknownJobTypeError extends WorkhorseError {
  readonly type: string;
  /** `fix` says what to do about it; by default, how to register a definition with the client. */
  constructor(type: string, fix = 'define it with defineJob() and pass it to createClient({ jobs }) (in a worker process, createWorkhorseAdapter({ jobs }))') {
    super('unknown_job_type', `unknown job type "${type}": ${fix}`);
    this.type = type;
  }
}

/** A payload whose JSON encoding is over the documented limit. */
export class PayloadTooLargeError extends WorkhorseError {
  readonly bytes: number;
  readonly limit: number;
  /** `subject`: what the payload belongs to, e.g. `job type "email.send"`, `topic "t"`, `signal "paid"`. */
  constructor(subject: string, bytes: number, limit: number) {
    super('payload_too_large', `payload of ${subject} is ${bytes} bytes; the limit is ${limit} bytes`);
    this.bytes = bytes;
    this.limit = limit;
  }
}

/**
 * A request body sent with a Content-Type that is not JSON, to a route that
 * reads JSON (HTTP 415). Nothing was parsed or written.
 */
export class UnsupportedMediaTypeError extends WorkhorseError {
  /** The Content-Type as sent (cut to 100 characters). */
  readonly contentType: string;
  /** `message`: what else about the body cannot be read (its charset, its Content-Encoding), when the type itself is JSON. */
  constructor(contentType: string, message?: string) {
    const shown = contentType.slice(0, 100);
    super('unsupported_media_type', message ?? `request body must be JSON: send "Content-Type: application/json" (got ${JSON.stringify(shown)})`);
    this.contentType = shown;
  }
}

/**
 * A write made under a fence that no longer holds: the job's lease expired
 * and was recovered (and perhaps re-claimed), or the job was cancelled.
 * Nothing was written.
 */
export class StaleLeaseError extends WorkhorseError {
  readonly jobId: string;
  readonly execution: number;
  /**
   * Set when the database did not say so: the worker went a whole lease
   * without a heartbeat it accepted (it could not be reached), so it gave
   * the lease up itself; recovery may hand the job to another worker.
   */
  readonly expiredMs: number | undefined;
  /** Set when the lease ran out because this process stalled that long (stopped, or its event loop blocked), not for a database fault. */
  readonly stalledMs: number | undefined;
  constructor(jobId: string, execution: number, what = 'write', expiredMs?: number, stalledMs?: number) {
    super(
      'stale_lease',
      expiredMs === undefined
        ? `${what} refused: job ${jobId} execution ${execution} is no longer leased by this owner`
        : stalledMs !== undefined
          ? `lease of job ${jobId} execution ${execution} ran out while this process was stalled for ${stalledMs} ms (stopped, or its event loop blocked), longer than its lease (${expiredMs} ms)`
          : `lease of job ${jobId} execution ${execution} ran out: no heartbeat reached the database for its whole lease (${expiredMs} ms)`,
    );
    this.jobId = jobId;
    this.execution = execution;
    this.expiredMs = expiredMs;
    this.stalledMs = stalledMs;
  }
}

/** A job, worker or queue that does not exist in this namespace. */
export class NotFoundError extends WorkhorseError {
  constructor(message: string) {
    super('not_found', message);
  }
}

/** An action the current state forbids (e.g. retrying a succeeded job). */
export class ConflictError extends WorkhorseError {
  constructor(message: string) {
    super('conflict', message);
  }
}

/**
 * The database schema is missing, older or newer than this code expects.
 * `detail` adds what gave it away (a protocol function that does not exist,
 * a migration this code does not have) to the message.
 */
export class SchemaVersionError extends WorkhorseError {
  readonly found: number | null;
  readonly expected: number;
  constructor(found: number | null, expected: number, options?: { cause?: unknown; detail?: string }) {
    const message =
      found === null
        ? `workhorse schema not found: run \`workhorse migrate\` (or migrate()) first; this code expects schema version ${expected}`
        : found < expected
          ? `workhorse schema version ${found} is behind this code (expects ${expected}): run \`workhorse migrate\``
          : `workhorse schema version ${found} is ahead of this code (expects ${expected}): upgrade workhorse in this service before running it against this database`;
    super('schema_version', options?.detail ? `${message} (${options.detail})` : message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.found = found;
    this.expected = expected;
  }
}

/** A handler ran past its job's `timeoutMs`. */
export class JobTimeoutError extends WorkhorseError {
  constructor(jobId: string, timeoutMs: number) {
    super('job_timeout', `job ${jobId} exceeded its timeout of ${timeoutMs} ms`);
  }
}

/** The worker stopped hard while the handler was still running. */
export class WorkerStoppedError extends WorkhorseError {
  constructor() {
    super('worker_stopped', 'the worker stopped before the handler finished');
  }
}

/** A call on a client (or its pool) after close(): nothing was written. */
export class ClientClosedError extends WorkhorseError {
  /** `poolEnded`: the client's pool was ended under it, by close() or by the pool's owner (a tick ends its own when it returns). */
  constructor(options?: { cause?: unknown; poolEnded?: boolean }) {
    super(
      'closed_client',
      options?.poolEnded
        ? "this client's connection pool was ended: by client.close(), or by whoever owns the pool (a tick ends its pool when it returns, so a handler still running after its tick cannot use the tick's client); create another with createClient()"
        : 'this client was closed (client.close()); create another with createClient()',
      options,
    );
  }
}

/** Invalid configuration, found at start-up. */
export class ConfigError extends WorkhorseError {
  readonly issues: ValidationIssue[];
  constructor(message: string, issues: ValidationIssue[] = [], options?: { cause?: unknown }) {
    super('config_invalid', message, options);
    this.issues = boundedIssues(issues);
  }
}

/** The embedded PostgreSQL could not be installed, initialised or started. */
export class EmbeddedPostgresError extends WorkhorseError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('embedded_postgres', message, options);
  }
}

/** An HTTP request without valid credentials (bearer token or signature). Nothing ran. */
export class UnauthorizedError extends WorkhorseError {
  constructor(message: string) {
    super('unauthorized', message);
  }
}

/** Valid credentials without the scope the route needs (HTTP 403). Nothing ran. */
export class ForbiddenError extends WorkhorseError {
  constructor(message: string) {
    super('forbidden', message);
  }
}

/** A tick reached its hard deadline while the handler was still running. */
export class TickDeadlineError extends WorkhorseError {
  constructor() {
    super('tick_deadline', 'the tick reached its deadline before the handler finished');
  }
}

/**
 * Fan-out invocations of more ticks failed (the Lambda API refused them,
 * throttled them or did not answer): the tick itself went on; the backlog
 * waits for the next scheduled tick. One line in a log; `errors` keeps each.
 */
export class FanoutFailedError extends WorkhorseError {
  readonly errors: unknown[];
  constructor(failed: number, count: number, errors: unknown[]) {
    const first = errors[0];
    const why = first instanceof Error ? `${first.name && first.name !== 'Error' ? `${first.name}: ` : ''}${first.message}` : String(first);
    super('fanout_failed', `${failed} of ${count} fan-out invocations failed (the first: ${why.split('\n')[0]!.slice(0, 300)})`, { cause: first });
    this.errors = errors;
  }
}

/**
 * The database did not answer, or the connection broke mid-call (a restart,
 * a failover, a terminated backend, a dropped or frozen connection).
 * Retryable: a job whose handler fails with it runs again, and the fence
 * keeps every recorded step and transactional step exactly once.
 */
export class DatabaseUnavailableError extends WorkhorseError {
  readonly retryable = true;
  constructor(message: string, options?: { cause?: unknown }) {
    super('database_unavailable', message, options);
  }
}

/**
 * A worker gave up writing handlers' outcomes (a refusal that outlasted the
 * lease window, a data error, a hard stop): what those handlers did is not
 * recorded, their jobs stay leased until the leases expire, and recovery
 * then runs them again and counts an attempt. One per batch given up.
 */
export class SettlementDroppedError extends WorkhorseError {
  readonly count: number;
  readonly jobIds: string[];
  constructor(count: number, jobIds: string[], reason: string, options?: { cause?: unknown }) {
    super(
      'settlement_dropped',
      `gave up writing ${count} job outcome${count === 1 ? '' : 's'} (${reason}): ` +
        `${count === 1 ? 'that job stays' : 'those jobs stay'} leased until the lease expires, then recovery runs ${count === 1 ? 'it' : 'them'} again and counts an attempt`,
      options,
    );
    this.count = count;
    this.jobIds = jobIds;
  }
}

/** The worker's registry row is gone (it was declared dead): it registers again before claiming. */
export class WorkerNotRegisteredError extends WorkhorseError {
  constructor(workerId: string, namespace: string) {
    super('worker_not_registered', `worker "${workerId}" is not registered in namespace "${namespace}"`);
  }
}

/**
 * A variable given as a Secrets Manager secret could not be read: the call
 * failed (access denied, not found, network) or the secret's value does not
 * fit (no string value, not the JSON its template needs). Never carries the
 * secret's value.
 */
export class SecretUnavailableError extends WorkhorseError {
  /** The environment variable the secret stands for. */
  readonly variable: string;
  readonly secretArn: string;
  constructor(variable: string, secretArn: string, reason: string, options?: { cause?: unknown }) {
    super('secret_unavailable', `${variable}: could not read secret ${secretArn}: ${reason}`, options);
    this.variable = variable;
    this.secretArn = secretArn;
  }
}

/**
 * A `ctx.waitForSignal` whose timeout passed before the signal came. The
 * timeout is recorded, so a retry would throw it again: uncaught, it fails
 * the job without retries.
 */
export class SignalTimeoutError extends WorkhorseError {
  readonly retryable = false;
  readonly wait: string;
  constructor(jobId: string, wait: string) {
    super('signal_timeout', `job ${jobId}: no signal "${wait}" arrived before its timeout`);
    this.wait = wait;
  }
}

/** A `ctx.waitForDecision` whose timeout passed before anyone decided (recorded: not retried, like SignalTimeoutError). */
export class DecisionTimeoutError extends WorkhorseError {
  readonly retryable = false;
  readonly wait: string;
  constructor(jobId: string, wait: string) {
    super('decision_timeout', `job ${jobId}: no decision "${wait}" was made before its timeout`);
    this.wait = wait;
  }
}

/**
 * A wait reached on its own that lost a race in an earlier run of the job:
 * the handler went on past it then, so it never resolves. Only a handler
 * whose code changed meets it (the race is gone, or the wait that won it is
 * no longer opened beside it); a retry would meet it again, so it fails the
 * job without retries.
 */
export class WaitLostError extends WorkhorseError {
  readonly retryable = false;
  readonly wait: string;
  constructor(jobId: string, wait: string) {
    super(
      'wait_lost',
      `job ${jobId}: wait "${wait}" lost a race in an earlier run and never resolves; the handler no longer opens the wait that won it beside it (do not change the waits of jobs already waiting)`,
    );
    this.wait = wait;
  }
}

/**
 * A transactional step's body ended the step's transaction itself (a
 * `commit` or `rollback` through the client it was handed): its writes no
 * longer commit with the step's record, so the step is not recorded. A
 * retry runs the same code, so it fails the job without retries.
 */
export class StepTransactionEndedError extends WorkhorseError {
  readonly retryable = false;
  readonly step: string;
  constructor(jobId: string, step: string) {
    super(
      'step_transaction_ended',
      `transactional step "${step}" of job ${jobId}: its body ended the step's transaction (a commit or rollback through the client it was handed), so its writes no longer commit with the step's record; the step is not recorded. Use savepoints inside a step, never commit or rollback`,
    );
    this.step = step;
  }
}

/**
 * A transactional step's transaction sat idle longer than the step's limit
 * (`idle_in_transaction_session_timeout`, two heartbeats) while the body ran
 * code outside the database, and PostgreSQL ended it: the step rolled back.
 * Its attempt fails and the job retries by its policy; a body that always
 * waits that long fails every time, so the message says what to change.
 */
export class StepIdleTimeoutError extends WorkhorseError {
  readonly retryable = true;
  readonly step: string;
  readonly limitMs: number;
  constructor(jobId: string, step: string, limitMs: number, options?: { cause?: unknown }) {
    super(
      'step_idle_timeout',
      `transactional step "${step}" of job ${jobId}: its transaction sat idle for longer than the step's limit (${limitMs} ms, two heartbeats) ` +
        "while the body's code ran outside the database, and PostgreSQL ended it; the step rolled back. Keep slow work (an API call, a sleep) " +
        'out of a txStep body (run it in ctx.step before it), or raise heartbeatMs',
      options,
    );
    this.step = step;
    this.limitMs = limitMs;
  }
}

/**
 * The worker's process stalled (stopped, or its event loop blocked) for
 * longer than a lease: the leases it held ran out meanwhile, and their
 * handlers were aborted when it ran again. An `error` event (or one log
 * line); the worker carries on.
 */
export class WorkerStalledError extends WorkhorseError {
  readonly stalledMs: number;
  readonly expiredLeases: number;
  /** Of those, the leases whose handler was still running (aborted); the others had not started or had returned. */
  readonly abortedHandlers: number;
  constructor(stalledMs: number, leaseMs: number, expiredLeases: number, abortedHandlers = expiredLeases) {
    const others = expiredLeases - abortedHandlers;
    const what = [
      abortedHandlers > 0 ? `${abortedHandlers} running handler(s) are aborted` : '',
      others > 0 ? `${others} not running (waiting to start, or returned with the outcome being written: kept only if no other worker took the job meanwhile)` : '',
    ].filter(Boolean);
    super(
      'worker_stalled',
      `the heartbeat fired ${stalledMs} ms late: this process was stopped, or its event loop blocked (a handler running synchronous code), ` +
        `for longer than a lease (${leaseMs} ms); the ${expiredLeases} lease(s) it held ran out meanwhile: ${what.join('; ')}. ` +
        'Keep synchronous work in handlers short (or move it to a worker thread), or raise leaseMs',
    );
    this.stalledMs = stalledMs;
    this.expiredLeases = expiredLeases;
    this.abortedHandlers = abortedHandlers;
  }
}

/**
 * A claim was answered after half a lease (the network held its answer back):
 * its jobs were not started, and are handed back unstarted, with no attempt
 * counted, to be claimed again.
 */
export class ClaimAnsweredLateError extends WorkhorseError {
  readonly tookMs: number;
  readonly jobs: number;
  constructor(tookMs: number, leaseMs: number, jobs: number) {
    super(
      'claim_answered_late',
      `a claim was answered ${tookMs} ms after it was sent, more than half a lease (${leaseMs} ms): its ${jobs} job(s) were not started ` +
        '(their leases may already have run out) and are handed back unstarted, with no attempt counted, to be claimed again. ' +
        'The connection to the database stalled; if claims are often this slow, raise leaseMs',
    );
    this.tookMs = tookMs;
    this.jobs = jobs;
  }
}

/** One child's end, as `ChildJobFailedError` reports it. */
export interface ChildOutcome {
  id: string;
  status: 'succeeded' | 'failed' | 'cancelled' | 'unfinished';
  result?: unknown;
  error?: unknown;
}

/**
 * `ctx.join` found a child that failed or was cancelled. `children` holds
 * every child's outcome, in order. The outcomes are recorded: uncaught, it
 * fails the parent without retries.
 */
export class ChildJobFailedError extends WorkhorseError {
  readonly retryable = false;
  readonly wait: string;
  readonly children: ChildOutcome[];
  constructor(wait: string, children: ChildOutcome[]) {
    const bad = children.filter((c) => c.status === 'failed' || c.status === 'cancelled');
    super('child_job_failed', `join "${wait}": ${bad.length} of ${children.length} child jobs did not succeed (${bad.map((c) => `${c.id} ${c.status}`).join(', ')})`);
    this.wait = wait;
    this.children = children;
  }
}

/** A session holding a lock on a workhorse table, as `MigrationLockTimeoutError` names it. */
export interface LockHolder {
  pid: number;
  /** pg_stat_activity's state: `idle in transaction`, `active`, ... (null when the migrating login may not read it). */
  state: string | null;
  user: string | null;
  applicationName: string | null;
  /** How long its transaction has been open, in ms. */
  transactionMs: number | null;
}

/**
 * A migration gave up waiting for table locks that other sessions held (an
 * idle-in-transaction session, a long report): each attempt waited at most a
 * short lock timeout, so the fleet queued behind it only that long, and the
 * migration rolled back every time. Nothing was applied; end those
 * transactions and run it again.
 */
export class MigrationLockTimeoutError extends WorkhorseError {
  readonly retryable = true;
  /** The sql/ file whose statement could not get its lock. */
  readonly file: string;
  readonly holders: LockHolder[];
  constructor(file: string, waitedMs: number, holders: LockHolder[], options?: { cause?: unknown; lock?: string }) {
    const who = holders.length
      ? `held by ${holders.map(describeHolder).join('; ')}: end those transactions (or pg_terminate_backend(pid)) and run it again`
      : 'held by transactions that have ended since: run it again';
    const lock = options?.lock ?? 'locks on workhorse tables';
    super('migration_lock_timeout', `sql/${file} waited ${Math.round(waitedMs / 1000)} s for ${lock} ${who}; nothing was applied`, { cause: options?.cause });
    this.file = file;
    this.holders = holders;
  }
}

function describeHolder(h: LockHolder): string {
  const facts = [
    h.state,
    h.transactionMs === null ? null : `transaction open ${Math.round(h.transactionMs / 1000)} s`,
    h.user ? `user "${h.user}"` : null,
    h.applicationName ? `application "${h.applicationName}"` : null,
  ].filter((f): f is string => f !== null);
  return facts.length ? `pid ${h.pid} (${facts.join(', ')})` : `pid ${h.pid}`;
}
