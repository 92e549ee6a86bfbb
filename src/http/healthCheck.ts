// The health probe behind GET /healthz, on its own bounded path so it stays
// fast when the API's pool is saturated: its own one-connection pool with a
// short connect and query timeout, and a short-lived cached answer shared by
// concurrent probes, so a flood of probes costs one query per `cacheMs`.
// It answers whether the database responds and its schema is the version
// this code expects, and nothing more.
import pg from 'pg';
import { readSchemaVersion } from '../db/schemaCheck.js';
import { SCHEMA_VERSION } from '../db/schemaVersion.js';
import { loginRefusal, sqlStateOf } from '../db/sqlState.js';
import { isTransientDbError } from '../db/transient.js';
import { isOperatorFixable } from '../db/operatorFixable.js';
import { READ_ONLY_SQL } from '../db/ping.js';

export type HealthStatus =
  | { ok: true; schemaVersion: number }
  | { ok: false; code: 'database_unreachable' | 'database_needs_operator' | 'schema_version'; message: string };

export interface HealthCheck {
  check(): Promise<HealthStatus>;
  /** Closes the probe's pool (when it created it). */
  close(): Promise<void>;
}

export interface HealthCheckOptions {
  /** Connection settings for the probe's own pool (its size and timeouts are the probe's). */
  poolConfig?: pg.PoolConfig;
  /** A pool to probe through instead; not closed by close(). */
  pool?: pg.Pool;
  /** How long an answer is reused. Default 1000 ms. */
  cacheMs?: number;
  /** Connect and query timeout of the probe. Default 1000 ms. */
  timeoutMs?: number;
}

export const HEALTH_APPLICATION_NAME = 'workhorse-health';

const UNREACHABLE: HealthStatus = { ok: false, code: 'database_unreachable', message: 'the database did not answer' };
/** A connection that failed before reaching the server for no network reason: `sslmode=require` against a server without SSL, an `sslcert` file gone. */
const UNUSABLE_SETTINGS: HealthStatus = {
  ok: false,
  code: 'database_unreachable',
  message: "the server could not open a database connection with its connection settings (SSL, certificate files): the server's log of an API request says why",
};

function probePool(config: pg.PoolConfig, timeoutMs: number): pg.Pool {
  const pool = new pg.Pool({
    ...config,
    max: 1,
    connectionTimeoutMillis: timeoutMs,
    // Client-side, so it works behind a transaction pooler that refuses a statement_timeout startup parameter.
    query_timeout: timeoutMs,
    idleTimeoutMillis: 10_000,
    allowExitOnIdle: true,
    application_name: HEALTH_APPLICATION_NAME,
  });
  // A dropped idle connection must not crash the process.
  pool.on('error', () => undefined);
  return pool;
}

/**
 * A server that answered with an error (a database that does not exist, a
 * login refused) did answer: said with its SQLSTATE only, since the probe
 * answers without credentials and PostgreSQL's message names databases and
 * roles. Anything else did not answer.
 */
function refusedOrUnreachable(err: unknown): HealthStatus {
  const code = sqlStateOf(err);
  if (typeof code !== 'string' || !/^[0-9A-Z]{5}$/.test(code)) return isTransientDbError(err) ? UNREACHABLE : UNUSABLE_SETTINGS;
  // A refusal only an operator ends (grants revoked, the schema gone) is named as every route names it;
  // a login refused is database_unreachable there too (errorHandler.ts asks it first).
  if (isOperatorFixable(err) && loginRefusal(err) === undefined) {
    return { ok: false, code: 'database_needs_operator', message: `the database refused the probe (SQLSTATE ${code}): an operator must act; PostgreSQL's log says which` };
  }
  return { ok: false, code: 'database_unreachable', message: `the database answered with an error (SQLSTATE ${code}): PostgreSQL's log says which` };
}

/** A database that answers but takes no writes (a standby, default_transaction_read_only): every write route answers 503, as /readyz of a worker does. */
const READ_ONLY: HealthStatus = {
  ok: false,
  code: 'database_unreachable',
  message: 'the database is read-only (a standby, or default_transaction_read_only is on): writes are refused',
};

/** Whether the database takes no writes; a read-only session is not kept (it stays read-only for its life, after the database takes writes again). */
async function readOnly(pool: pg.Pool): Promise<boolean> {
  const c = await pool.connect();
  let ro = false;
  try {
    const { rows } = await c.query<{ read_only: boolean }>(`select ${READ_ONLY_SQL} as read_only`);
    ro = rows[0]?.read_only === true;
    return ro;
  } finally {
    c.release(ro ? new Error('a read-only session: not reused') : undefined);
  }
}

async function probe(pool: pg.Pool, timeoutMs: number): Promise<HealthStatus> {
  let timer: NodeJS.Timeout | undefined;
  // A backstop for a connection that hangs past the driver's own timeouts.
  const late = new Promise<HealthStatus>((resolve) => {
    timer = setTimeout(() => resolve(UNREACHABLE), 2 * timeoutMs);
  });
  const read = readSchemaVersion(pool).then(
    async (version): Promise<HealthStatus> => {
      if (version !== SCHEMA_VERSION) return { ok: false, code: 'schema_version', message: `schema version is ${version ?? 'missing'}; this code expects ${SCHEMA_VERSION}` };
      return (await readOnly(pool)) ? READ_ONLY : { ok: true, schemaVersion: version };
    },
  ).catch((err: unknown) => refusedOrUnreachable(err));
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
  }
}

export function createHealthCheck(options: HealthCheckOptions): HealthCheck {
  const cacheMs = options.cacheMs ?? 1000;
  const timeoutMs = options.timeoutMs ?? 1000;
  const owned = options.pool ? undefined : probePool(options.poolConfig ?? {}, timeoutMs);
  const pool = options.pool ?? owned!;
  let cached: { at: number; status: HealthStatus } | undefined;
  let inFlight: Promise<HealthStatus> | undefined;
  return {
    check() {
      if (cached && Date.now() - cached.at < cacheMs) return Promise.resolve(cached.status);
      inFlight ??= probe(pool, timeoutMs).then((status) => {
        cached = { at: Date.now(), status };
        inFlight = undefined;
        return status;
      });
      return inFlight;
    },
    async close() {
      await owned?.end();
    },
  };
}
