// The client: the typed front door for producers and operators. It owns (or
// borrows) the pg pool, knows the job definitions of this service, and turns
// every call into one protocol call (a very large enqueueMany into several,
// in one transaction: enqueueChunks.ts). Enqueue can join the caller's own pg
// transaction by passing `{ tx }`.
import pg from 'pg';
import { ClientClosedError, ConfigError, ConflictError, NotFoundError, UnknownJobTypeError, ValidationError } from '../errors.js';
import type { MigrateResult } from '../db/migrate.js';
import { GuardedDb } from '../db/guardedDb.js';
import { inOwnTransaction } from '../db/ownTransaction.js';
import { prepareConnection } from '../db/connectionSetup.js';
import { endPool, trackConnections } from '../db/poolEnd.js';
import { assertSchemaVersion } from '../db/schemaCheck.js';
import { postgresProtocol, type AlertRecord, type Decision, type JobRecord, type PendingDecision, type Protocol, type Queryable } from '../db/protocol.js';
import { OutboxAdmin } from '../outbox/outboxAdmin.js';
import { currentTraceContext } from '../telemetry/traceContext.js';
import { publishEvent, type PublishOptions, type PublishResult } from '../outbox/publish.js';
import { jobIdSchema } from '../names.js';
import { parseConfig, parseInput, readArgument } from '../validation.js';
import { Admin } from './admin.js';
import * as durable from './durableClient.js';
import { isJobDefinition, type JobDefinition, type PayloadInput } from './defineJob.js';
import { checkedTx, txRefusal } from './txRefusal.js';
import { alertsFilterSchema, cancelOptionsSchema, enqueueItemSchema, enqueueManyOptionsSchema, migrateOptionsSchema, txSchema } from './callArguments.js';
import { clientOptionsSchema, type ClientOptions } from './clientOptions.js';
import { enqueueChunked } from './enqueueChunks.js';
import { buildJobInsert, type EnqueueOptions } from './enqueueInput.js';
import { hintsFor, type WakeHints } from './wakeHints.js';
import { isPgClient, isPgPool } from '../db/pgShape.js';

export type { ClientOptions };

export interface EnqueueResult {
  id: string;
  /** false when a job with the same dedupeKey already existed; `id` is that job's. */
  created: boolean;
}

/** Something that runs queries: the client's pool, or the caller's transaction. */
export interface TxOption {
  tx?: Queryable;
}

/**
 * The payload enqueue accepts for `job`: the input type of a definition's
 * schema (a wrong payload is a compile error), or anything for a job type
 * named by string (its registered schema checks it at run time).
 */
export type PayloadFor<J extends JobDefinition | string> = J extends JobDefinition ? PayloadInput<J> : unknown;

/** One item of enqueueMany; with a definition, its payload is typed like enqueue's. */
export type EnqueueManyItem<J extends JobDefinition | string = JobDefinition | string> = J extends unknown
  ? { job: J; payload: PayloadFor<J>; options?: EnqueueOptions }
  : never;

/** Items whose payloads are each typed by their own job (`J` is inferred per item), so one array can mix job types. */
export type EnqueueManyItems<J extends readonly (JobDefinition | string)[]> = { [K in keyof J]: EnqueueManyItem<J[K]> };

/** How long the client's own pool waits for a connection (a free one or a new one). */
const CONNECT_TIMEOUT_MS = 10_000;
/**
 * close() takes at most this long: up to a quarter of it for what the
 * client's calls under way wait for, then half of what is left for the
 * connections lent out to come back, and the other half once their sockets
 * are destroyed (poolEnd.ts).
 */
export const CLOSE_BOUND_MS = 10_000;

export class Client {
  /** The protocol calls every part of workhorse makes (the PostgreSQL provider). */
  readonly protocol: Protocol = postgresProtocol;
  readonly namespace: string;
  readonly pool: pg.Pool;
  /** The pool as the client's own calls use it: each checkout and query bounded by `callTimeoutMs`. */
  private readonly db: GuardedDb;
  /** The version check's own calls (this.db waits for the check before each checkout until it passed). */
  private readonly checkDb: GuardedDb;
  /**
   * The client's own bounded calls, for the modules that call the protocol
   * on its behalf (Schedules, the built-in sys.* handlers, the dashboard's
   * reads): each checkout and query within `callTimeoutMs`, a stranded
   * connection destroyed, a refused session tagged (connectRefusal.ts).
   */
  get calls(): Queryable {
    return this.db;
  }
  readonly admin: Admin;
  /** The outbox seen by an operator: list, retry, discard events. */
  readonly outbox: OutboxAdmin;
  readonly maxPayloadBytes: number;
  /** Optional wake hints beside NOTIFY; the caller that made them closes them. */
  readonly wakeHints: WakeHints | undefined;
  private readonly ownsPool: boolean;
  /** The connections of the pool it made (poolEnd.ts). */
  private readonly connections: Set<pg.PoolClient>;
  private closing: Promise<void> | undefined;
  /** Set by close(): every later call is a ClientClosedError, its pool the client's or the caller's. */
  private closed = false;
  private readonly definitions = new Map<string, JobDefinition>();
  private schemaChecked: Promise<void> | undefined;
  /** The schema was found at this code's version (once is enough). */
  private schemaOk = false;

  constructor(options: ClientOptions) {
    const o = parseConfig(clientOptionsSchema, options, 'client options');
    this.namespace = o.namespace;
    this.maxPayloadBytes = o.maxPayloadBytes;
    this.wakeHints = o.wakeHints;
    this.ownsPool = !o.pool;
    this.pool =
      o.pool ??
      new pg.Pool({
        connectionString: o.connectionString,
        max: o.poolMax,
        // Nothing waits forever for a connection, and a dead peer is noticed
        // by TCP keepalive rather than hours later.
        connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        ...(o.queryTimeoutMs ? { query_timeout: o.queryTimeoutMs } : {}),
        keepAlive: true,
        keepAliveInitialDelayMillis: 10_000,
        onConnect: prepareConnection,
      });
    // An idle client's connection can die (server restart, failover, pooler
    // timeout): the pool drops it; without a listener node would crash.
    if (this.pool.listenerCount('error') === 0) this.pool.on('error', () => undefined);
    this.connections = this.ownsPool ? trackConnections(this.pool) : new Set();
    const guards = { timeoutMs: o.callTimeoutMs, typedConnectFaults: true, typedRefusals: true, isClosed: () => this.closed };
    // Every call checks the schema's version first, once: a read or an operator's write on a schema of
    // another version is refused as enqueue is (SchemaVersionError), not run against functions of that version.
    this.db = new GuardedDb(this.pool, { ...guards, beforeCheckout: () => (this.schemaOk || this.closed ? undefined : this.ready()) });
    this.checkDb = new GuardedDb(this.pool, guards);
    for (const d of o.jobs) this.define(d);
    this.admin = new Admin(this.protocol, this.db, this.namespace);
    this.outbox = new OutboxAdmin(this.protocol, this.db, this.namespace);
  }

  /** Registers a job definition (also done by createClient({ jobs })). */
  define(def: JobDefinition): this {
    if (!isJobDefinition(def)) throw new ConfigError('client.define takes a defineJob() value', [{ path: [], message: 'not a job definition' }]);
    const existing = this.definitions.get(def.type);
    if (existing && existing !== def) throw new ConfigError(`two different job definitions are named "${def.type}"`);
    this.definitions.set(def.type, def);
    return this;
  }

  definition(type: string): JobDefinition {
    const d = this.definitions.get(type);
    if (!d) throw new UnknownJobTypeError(type);
    return d;
  }

  hasDefinition(type: string): boolean {
    return this.definitions.has(type);
  }

  get definedTypes(): string[] {
    return [...this.definitions.keys()];
  }

  /**
   * Applies the migrations in sql/ (idempotent, safe to run concurrently).
   * The migrator is imported when first called: the tick and HTTP Lambda
   * bundles leave it out (infra/clientMigrateStub.ts), since the stack's
   * migration function migrates and they only check the schema.
   * `lockTimeoutMs`: how long to keep trying while other sessions hold
   * locks it needs (default 60 s; then a MigrationLockTimeoutError).
   */
  async migrate(options: { lockTimeoutMs?: number } = {}): Promise<MigrateResult> {
    if (this.closed) throw new ClientClosedError();
    const { lockTimeoutMs } = parseInput(migrateOptionsSchema, options ?? {}, 'migrate options');
    const { migrate } = await import('../db/migrate.js');
    return migrate({ pool: this.pool, lockTimeoutMs: lockTimeoutMs as number | undefined });
  }

  /**
   * Fails with SchemaVersionError unless the schema matches this code
   * (checked once), and with ClientClosedError after close(): every call
   * that may write in the caller's `tx`, and every worker, asks this first.
   */
  ready(): Promise<void>;
  /** @internal With `tx` (the caller's transaction, checked), a check not yet passed runs on it, not on a pool connection. */
  ready(tx: Queryable | undefined): Promise<void>;
  ready(tx?: Queryable): Promise<void> {
    if (this.closed) return Promise.reject(new ClientClosedError());
    if (this.schemaOk) return Promise.resolve();
    // A call in the caller's transaction must not wait for a connection of the pool: every one may be
    // held by such transactions (then it waited callTimeoutMs and failed), or the server may have no
    // connection left to give. Its own connection answers the check.
    if (tx) {
      return assertSchemaVersion(tx).then(() => {
        this.schemaOk = true;
      });
    }
    this.schemaChecked ??= assertSchemaVersion(this.checkDb).then(
      () => {
        this.schemaOk = true;
      },
      (err: unknown) => {
        this.schemaChecked = undefined;
        throw err;
      },
    );
    return this.schemaChecked;
  }

  private resolve(job: JobDefinition | string): JobDefinition {
    if (typeof job === 'string') return this.definition(job);
    // A definition of a type registered under another definition is refused, as at createClient:
    // its queue, retry policy and schema would silently replace the registered ones for this job.
    if (this.definitions.get(job.type) !== job) this.define(job);
    return job;
  }

  /**
   * Enqueues one job. With a definition, the payload's type is its schema's
   * input (a wrong payload does not compile); with a type name, any payload
   * compiles and the registered schema checks it at run time. Either way the
   * schema validates it before anything is written.
   */
  async enqueue<J extends JobDefinition | string>(
    job: J,
    payload: NoInfer<PayloadFor<J>>,
    options?: EnqueueOptions & TxOption,
  ): Promise<EnqueueResult> {
    const item = { job, payload, options } as EnqueueManyItem;
    const tx = readArgument(() => options?.tx, ['options', 'tx'], 'enqueue options');
    const [r] = await this.enqueueItems([item], { tx }, false);
    return r!;
  }

  /**
   * Enqueues a batch, all or nothing. Every item is validated first; one bad
   * item rejects the whole batch and nothing is written. Up to
   * ENQUEUE_CHUNK_ITEMS items (and 64 MiB of payload) go in one statement; a
   * larger batch goes in several, in one transaction (`tx`, or one the
   * client opens and commits). Results are in input order. Items may mix
   * job types: each payload is typed by its own item's job, like enqueue's.
   */
  async enqueueMany<const J extends readonly (JobDefinition | string)[]>(
    items: EnqueueManyItems<J>,
    opts: TxOption = {},
  ): Promise<EnqueueResult[]> {
    const { tx } = parseInput(enqueueManyOptionsSchema, opts, 'enqueueMany options');
    return this.enqueueItems(items as readonly unknown[], { tx: tx ?? undefined }, true);
  }

  /** enqueue and enqueueMany; `indexed`: a refused item's issue paths start with its index (enqueueMany's). */
  private async enqueueItems(items: readonly unknown[], opts: TxOption, indexed: boolean): Promise<EnqueueResult[]> {
    if (!Array.isArray(items)) throw new ValidationError('enqueueMany takes an array of { job, payload, options }');
    const tx = parseInput(txSchema, opts?.tx, 'tx') ?? undefined;
    // Array.from: a hole of a sparse array is an item (undefined, refused by its index), not skipped by map.
    const rows = readArgument(() => Array.from(items as readonly unknown[]), [], 'enqueueMany items').map((raw: unknown, i) => {
      try {
        const item = parseInput(enqueueItemSchema, raw, 'enqueue item');
        const { tx: itemTx, ...options } = (item.options ?? {}) as EnqueueOptions & TxOption;
        // An item's own tx was dropped: its job committed outside the caller's transaction.
        if (indexed && itemTx !== undefined) {
          const message = "a transaction is enqueueMany's second argument, for the whole batch (enqueueMany(items, { tx })), not an item's option";
          throw new ValidationError(`invalid enqueue item: options.tx: ${message}`, [{ path: ['options', 'tx'], message }]);
        }
        return buildJobInsert(this.resolve(item.job), item.payload, options, this.maxPayloadBytes);
      } catch (err) {
        if (err instanceof ValidationError && indexed) {
          throw new ValidationError(`item ${i}: ${err.message}`, err.issues.map((x) => ({ ...x, path: [i, ...x.path] })));
        }
        // Any other refusal of one item (too large, an unknown type) names the item too.
        if (err instanceof Error && indexed) err.message = `item ${i}: ${err.message}`;
        throw err;
      }
    });
    if (rows.length === 0) return [];
    // The enqueueing span (if any) becomes the parent of the jobs' spans.
    const traceContext = currentTraceContext();
    if (traceContext) for (const r of rows) r.trace_context = traceContext;
    const call = indexed ? 'enqueueMany' : 'enqueue';
    const inTx = tx ? checkedTx(tx, call) : undefined;
    await this.ready(schemaCheckVia(inTx)).catch((err: unknown) => {
      throw inTx ? txRefusal(err, call) : err;
    });
    const results = inTx
      ? await enqueueChunked(this.protocol, inTx, this.namespace, rows).catch((err: unknown) => {
          throw txRefusal(err, call);
        })
      : await enqueueChunked(this.protocol, this.db, this.namespace, rows);
    // Inside the caller's transaction nothing is committed yet: NOTIFY (sent
    // at its commit) and the safety poll cover those.
    if (this.wakeHints && !tx) {
      this.wakeHints.publish(this.namespace, hintsFor(rows, results.map((r) => r.created)));
    }
    return results;
  }

  /**
   * Publishes an event through the transactional outbox. With `{ tx }` it
   * is written in the caller's transaction and exists iff that commits;
   * the sys.outbox deliverers send it at least once to the sinks that take
   * its topic, in order among events of the same `key`.
   */
  async publish(topic: string, payload: unknown, options?: PublishOptions): Promise<PublishResult> {
    if (this.closed) throw new ClientClosedError();
    return publishEvent(this.protocol, this.db, this.namespace, this.maxPayloadBytes, topic, payload, options, (tx) => this.ready(schemaCheckVia(tx)));
  }

  /** Alerts of this namespace, newest first (open and resolved unless `state` says which). */
  async alerts(filter: { state?: 'open' | 'resolved'; limit?: number } = {}): Promise<AlertRecord[]> {
    const f = parseInput(alertsFilterSchema, filter, 'alerts filter');
    return this.protocol.listAlerts(this.db, this.namespace, f.state ?? null, f.limit);
  }

  /** The job's record; a waiting job's says what it waits for and since when (`wait`, and every open wait in `waits`). */
  async getJob(id: string | number): Promise<JobRecord | null> {
    const jobId = String(parseInput(jobIdSchema, id, 'job id'));
    const job = await this.protocol.getJob(this.db, this.namespace, jobId);
    // A cancelled job keeps the waits it was cancelled in (retried, it waits again): shown too, so a
    // cancelled parent's join still names the children to retry before it (durable.md).
    if (job?.status === 'waiting' || job?.status === 'cancelled') {
      const waits = await this.protocol.openWaits(this.db, this.namespace, jobId);
      if (job.status === 'waiting' || waits.length > 0) {
        job.waits = waits;
        job.wait = waits[0] ?? null;
      }
    }
    return job;
  }

  /**
   * Cancels a job that has not ended (running, ready or waiting); returns its
   * record afterwards. Its unfinished children go with it unless they were
   * spawned detached, or `keepChildren` is set.
   */
  async cancel(id: string | number, options: { keepChildren?: boolean } = {}): Promise<JobRecord> {
    const jobId = String(parseInput(jobIdSchema, id, 'job id'));
    const { keepChildren } = parseInput(cancelOptionsSchema, options, 'cancel options');
    const changed = await this.changedThenRead(jobId, (q) => this.protocol.cancel(q, this.namespace, jobId, !keepChildren));
    if (changed === null) throw new NotFoundError(`job ${jobId} not found in namespace "${this.namespace}"`);
    return changed.job;
  }

  /**
   * Makes a failed or cancelled job ready again with a fresh attempt budget
   * (or runs a scheduled job now). A succeeded, running or waiting job (a
   * durable wait: signal it, or cancel it) is a ConflictError naming its status.
   */
  async retry(id: string | number): Promise<JobRecord> {
    const jobId = String(parseInput(jobIdSchema, id, 'job id'));
    const changed = await this.changedThenRead(jobId, (q) => this.protocol.retry(q, this.namespace, jobId));
    if (changed === null) throw new NotFoundError(`job ${jobId} not found in namespace "${this.namespace}"`);
    if (changed.status !== 'ready') throw new ConflictError(`job ${jobId} is ${changed.status}; only failed, cancelled or scheduled jobs can be retried`);
    return changed.job;
  }

  /**
   * Runs an operator change and reads the job's record in one transaction:
   * the change holds the row's lock until the commit, so the record is the
   * state the change left, not one a concurrent cancel or retry made after
   * it. Null when the job does not exist in this namespace.
   */
  private changedThenRead(jobId: string, change: (q: Queryable) => Promise<string | null>): Promise<{ status: string; job: JobRecord } | null> {
    return this.db.withBoundedClient((conn, discard) =>
      inOwnTransaction(
        conn,
        async (q) => {
          const status = await change(q);
          return status === null ? null : { status, job: (await this.protocol.getJob(q, this.namespace, jobId))! };
        },
        (e) => discard(e instanceof Error ? e : new Error(String(e))),
      ),
    );
  }

  /**
   * Sends signal `name` to a job (its ctx.waitForSignal of that name). Kept
   * if the wait has not opened yet. A job takes one signal per name: a second
   * is refused with ConflictError.
   */
  signal(id: string | number, name: string, payload?: unknown): Promise<durable.SignalResult> {
    return durable.signal(this.durableDeps(), id, name, payload);
  }

  /** Sends signal `name` to the job whose wait chose `key` (or keeps it for the first that does). */
  signalKey(key: string, name: string, payload?: unknown): Promise<durable.SignalResult> {
    return durable.signalKey(this.durableDeps(), key, name, payload);
  }

  /** Records a person's decision on a job's ctx.waitForDecision; a choice outside its choices is a ValidationError. */
  decide(id: string | number, name: string, decision: durable.DecisionInput): Promise<Decision> {
    return durable.decide(this.durableDeps(), id, name, decision);
  }

  /** The decisions waiting for people, oldest first. */
  pendingDecisions(filter?: durable.DecisionFilter): Promise<PendingDecision[]> {
    return durable.pendingDecisions(this.durableDeps(), filter);
  }

  private durableDeps(): durable.DurableDeps {
    return { protocol: this.protocol, db: this.db, namespace: this.namespace, maxPayloadBytes: this.maxPayloadBytes };
  }

  /**
   * Closes the pool if the client created it; calling it again is harmless.
   * Either way the client is closed: a later call is a ClientClosedError.
   * What the client's calls are waiting for when it closes (a connection,
   * an answer) comes first, within a quarter of CLOSE_BOUND_MS; a connection any
   * call asks for afterwards is refused, so such a call fails at once with
   * ClientClosedError. (A call whose connection was being made when the
   * pool ended waited for pg's 10 s connect timeout and failed as "database
   * unavailable".)
   */
  async close(): Promise<void> {
    this.closed = true;
    // Idempotent: a second close (two owners shutting down) waits for the first.
    if (this.ownsPool) await (this.closing ??= this.endOwnPool());
  }

  private async endOwnPool(): Promise<void> {
    const start = Date.now();
    await Promise.all([this.db.idle(CLOSE_BOUND_MS / 4), this.checkDb.idle(CLOSE_BOUND_MS / 4)]);
    this.db.failWaiting();
    this.checkDb.failWaiting();
    // What is left of the bound: half of it to end gracefully, half once the sockets are destroyed.
    await endPool(this.pool, this.connections, (CLOSE_BOUND_MS - (Date.now() - start)) / 2);
  }
}

export function createClient(options: ClientOptions): Client {
  return new Client(options);
}

/**
 * The caller's transaction as the connection a first call's schema check
 * runs on: node-postgres's own client (or pool), whose answers are
 * PostgreSQL's. Another object with a query() (a test double, another
 * driver's wrapper) is checked through the pool, as before: its answers to
 * the check's own statements are not to be trusted to mean "no schema".
 */
function schemaCheckVia(tx: Queryable | undefined): Queryable | undefined {
  return isPgClient(tx) || isPgPool(tx) ? tx : undefined;
}
