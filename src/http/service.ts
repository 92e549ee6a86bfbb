// The HTTP app wired from the environment, as `workhorse serve` and the
// Lambda entry run it: a client on DATABASE_URL, a health probe with its own
// one-connection pool, the credentials and limits from src/config.ts, and
// the real runTick behind POST /tick.
import type { Hono } from 'hono';
import type { WorkhorseApp } from '../app/defineApp.js';
import { createClient, type Client } from '../client/client.js';
import { loadEnvConfig, loadHttpEnvConfig, requireDatabaseUrl } from '../config.js';
import type { HttpAppConfig } from './appConfig.js';
import { createApp } from './createApp.js';
import type { HttpEnv } from './env.js';
import { createHealthCheck } from './healthCheck.js';
import { tickRunnerFor } from './tickAdapter.js';

export interface HttpServiceOptions {
  /** The app whose job types POST /jobs accepts and whose handlers POST /tick runs. */
  app?: WorkhorseApp;
  /** The environment to read (defaults to the process's). */
  env?: Record<string, string | undefined>;
  /** Size of the client's pool. */
  poolMax?: number;
  /** Bound on each query of the client's pool (default WORKHORSE_HTTP_QUERY_TIMEOUT_MS, or the tick budget if longer). */
  queryTimeoutMs?: number;
  /** Settings that win over the environment's. */
  overrides?: Partial<Omit<HttpAppConfig, 'client'>>;
}

export interface HttpService {
  app: Hono<HttpEnv>;
  client: Client;
  close(): Promise<void>;
}

export function createHttpService(options: HttpServiceOptions = {}): HttpService {
  const env = loadEnvConfig(options.env);
  const http = loadHttpEnvConfig(options.env);
  const databaseUrl = requireDatabaseUrl(env, 'the HTTP app');
  const queryTimeoutMs = options.queryTimeoutMs ?? Math.max(http.queryTimeoutMs, http.tickBudgetMs);
  const client = createClient({
    connectionString: databaseUrl,
    namespace: env.namespace,
    poolMax: options.poolMax ?? 10,
    // A frozen connection makes its request a 503 instead of holding it forever;
    // POST /tick borrows this pool, so the bound is never below the tick budget.
    queryTimeoutMs,
    callTimeoutMs: queryTimeoutMs,
  });
  const health = createHealthCheck({ poolConfig: { connectionString: databaseUrl } });
  const app = createApp({
    client,
    app: options.app,
    signingSecrets: http.signingSecrets,
    apiTokens: http.apiTokens,
    signedScopes: http.signedScopes,
    maxBodyBytes: http.maxBodyBytes,
    maxBodyReads: http.maxBodyReads,
    tickBudgetMs: http.tickBudgetMs,
    tick: tickRunnerFor(client, options.app, http.tick),
    health,
    sessionSecret: http.sessionSecret,
    sessionTtlMs: http.sessionTtlMs,
    ...options.overrides,
  });
  return {
    app,
    client,
    close: async () => {
      await Promise.all([client.close(), health.close()]);
    },
  };
}
