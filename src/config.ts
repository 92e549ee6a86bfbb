// Environment configuration, parsed once with zod. This is the only module
// that reads process.env; the CLI and the Lambda handlers call it at start
// and pass the result down. The Lambda handlers first resolve the variables
// given as secrets (loadRuntimeEnvironment, src/secrets/) and pass the
// resolved environment to the loaders below.
import * as z from 'zod';
import { apiTokensSchema, bearerTokenSchema, combineTokens, secretSchema, type ApiToken } from './credentials/tokens.js';
import { scopeSchema, type Scope } from './credentials/scopes.js';
import { DEFAULT_SESSION_TTL_MS, sessionSecretSchema, sessionTtlMsSchema } from './http/ui/session/sessionSettings.js';
import { namespaceSchema } from './names.js';
import { parseSecretReferences, type SecretReference } from './secrets/references.js';
import { parseTickEnv, type TickEnv } from './tick/env.js';
import { isPostgresUrl, POSTGRES_URL_MESSAGE, refuseBadConnectionSettings } from './db/connectionString.js';
import { envInteger } from './envInteger.js';
import { ConfigError } from './errors.js';
import { parseConfig } from './validation.js';

/** DATABASE_URL: a PostgreSQL connection URL, trimmed (src/db/connectionString.ts says why). */
export const databaseUrlSchema = z.string().trim().min(1, { error: 'is empty', abort: true }).refine(isPostgresUrl, POSTGRES_URL_MESSAGE).superRefine(refuseBadConnectionSettings);

const envSchema = z.object({
  DATABASE_URL: databaseUrlSchema.optional(),
  WORKHORSE_NAMESPACE: namespaceSchema.default('default'),
  WORKHORSE_DATA_DIR: z.string().min(1).optional(),
});

export interface EnvConfig {
  /** Unset means: use the embedded PostgreSQL. */
  databaseUrl: string | undefined;
  namespace: string;
  /** Where the embedded PostgreSQL keeps its files. */
  dataDir: string | undefined;
}

export function loadEnvConfig(env: Record<string, string | undefined> = process.env): EnvConfig {
  const e = parseConfig(envSchema, { ...env, DATABASE_URL: env.DATABASE_URL || undefined }, 'environment');
  return { databaseUrl: e.DATABASE_URL, namespace: e.WORKHORSE_NAMESPACE, dataDir: e.WORKHORSE_DATA_DIR };
}

/** Request bodies over this many bytes get 413 unless WORKHORSE_MAX_BODY_BYTES says otherwise. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024;
/** A POST /tick on a server (not Lambda) runs at most this long unless configured. */
export const DEFAULT_HTTP_TICK_BUDGET_MS = 10_000;
/**
 * The shortest POST /tick: a tick shorter than this is not worth starting. It
 * leaves a tight safety margin (tickAdapter.ts, TIGHT_MARGIN_MS) as much time
 * again to claim and run.
 */
export const MIN_TICK_BUDGET_MS = 500;
/** Each query of the HTTP client's pool is answered within this by default (WORKHORSE_HTTP_QUERY_TIMEOUT_MS). */
export const DEFAULT_HTTP_QUERY_TIMEOUT_MS = 30_000;

/** Request bodies read at the same time unless WORKHORSE_MAX_BODY_READS says otherwise. */
export const DEFAULT_MAX_BODY_READS = 32;

/** WORKHORSE_API_TOKENS: a JSON array of `{ name?, token, scopes }`. The parse error never echoes the value. */
const tokensJsonSchema = z
  .string()
  .transform((s, ctx) => {
    try {
      return JSON.parse(s) as unknown;
    } catch {
      ctx.addIssue({ code: 'custom', message: 'not valid JSON: expected an array of { "name", "token", "scopes" }' });
      return z.NEVER;
    }
  })
  .pipe(apiTokensSchema);

const scopeListSchema = z
  .string()
  .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
  .pipe(z.array(scopeSchema));

const httpEnvSchema = z.object({
  WORKHORSE_SIGNING_SECRET: secretSchema.optional(),
  WORKHORSE_SIGNING_SECRET_NEXT: secretSchema.optional(),
  WORKHORSE_API_TOKEN: bearerTokenSchema.optional(),
  WORKHORSE_API_TOKENS: tokensJsonSchema.optional(),
  WORKHORSE_SIGNED_SCOPES: scopeListSchema.optional(),
  WORKHORSE_MAX_BODY_BYTES: envInteger().pipe(z.number().int().min(1024).max(64 * 1024 * 1024)).default(DEFAULT_MAX_BODY_BYTES),
  WORKHORSE_MAX_BODY_READS: envInteger().pipe(z.number().int().min(1).max(10_000)).default(DEFAULT_MAX_BODY_READS),
  WORKHORSE_HTTP_TICK_BUDGET_MS: envInteger().pipe(z.number().int().min(1000).max(900_000)).default(DEFAULT_HTTP_TICK_BUDGET_MS),
  WORKHORSE_HTTP_QUERY_TIMEOUT_MS: envInteger().pipe(z.number().int().min(1000).max(3_600_000)).default(DEFAULT_HTTP_QUERY_TIMEOUT_MS),
  WORKHORSE_SESSION_SECRET: sessionSecretSchema.optional(),
  WORKHORSE_SESSION_TTL_MS: envInteger().pipe(sessionTtlMsSchema).default(DEFAULT_SESSION_TTL_MS),
});

/** The HTTP app's settings (`workhorse serve`, handlers/http.ts). */
export interface HttpEnvConfig {
  /** Accepted HMAC secrets: the current one, then the next one during a rotation. */
  signingSecrets: string[];
  /** Bearer tokens accepted on the API routes (never on POST /tick), each with its scopes. */
  apiTokens: ApiToken[];
  /** Scopes a signed request has on the API routes; empty means signatures work on POST /tick only. */
  signedScopes: Scope[];
  maxBodyBytes: number;
  /** Request bodies read at the same time; more get 503 with Retry-After. */
  maxBodyReads: number;
  /** Budget of one POST /tick when the platform gives none (Lambda does). */
  tickBudgetMs: number;
  /** Each query of the HTTP client's pool is answered within this (raised to the tick budget when that is longer). */
  queryTimeoutMs: number;
  /** The tick settings a POST /tick runs with (the tick's variables; fan-out only to WORKHORSE_FANOUT_FUNCTION). */
  tick: TickEnv['options'];
  /** WORKHORSE_APP: path or file URL of the app module whose jobs the API accepts. */
  appModule: string | undefined;
  /** Signs the dashboard's session cookies; unset, the dashboard accepts bearer headers only (no sign-in). */
  sessionSecret: string | undefined;
  /** How long a dashboard session lasts. */
  sessionTtlMs: number;
}

export function loadHttpEnvConfig(env: Record<string, string | undefined> = process.env): HttpEnvConfig {
  const keys = Object.keys(httpEnvSchema.shape) as (keyof typeof httpEnvSchema.shape)[];
  // Empty variables count as unset.
  const picked = Object.fromEntries(keys.map((k) => [k, env[k] || undefined]));
  const e = parseConfig(httpEnvSchema, picked, 'environment');
  // The HTTP function is not a tick function: it never fans out to itself. On Lambda its ticks still
  // write the alert metrics (EMF lines), as the tick function's do: the alarms read them whichever evaluated.
  const tick = parseTickEnv({ ...env, AWS_LAMBDA_FUNCTION_NAME: undefined });
  if (env.AWS_LAMBDA_FUNCTION_NAME) tick.options.alertMetrics = true;
  return {
    signingSecrets: [e.WORKHORSE_SIGNING_SECRET, e.WORKHORSE_SIGNING_SECRET_NEXT].filter((s): s is string => Boolean(s)),
    apiTokens: combineTokens(e.WORKHORSE_API_TOKEN, e.WORKHORSE_API_TOKENS ?? [], 'WORKHORSE_API_TOKEN', 'WORKHORSE_API_TOKENS'),
    signedScopes: [...new Set(e.WORKHORSE_SIGNED_SCOPES ?? [])],
    maxBodyBytes: e.WORKHORSE_MAX_BODY_BYTES,
    maxBodyReads: e.WORKHORSE_MAX_BODY_READS,
    tickBudgetMs: e.WORKHORSE_HTTP_TICK_BUDGET_MS,
    queryTimeoutMs: e.WORKHORSE_HTTP_QUERY_TIMEOUT_MS,
    tick: tick.options,
    appModule: tick.appModule,
    sessionSecret: e.WORKHORSE_SESSION_SECRET,
    sessionTtlMs: e.WORKHORSE_SESSION_TTL_MS,
  };
}

/**
 * The serverless tick's settings (handlers/tick.ts, createTickHandler,
 * `workhorse tick`): DATABASE_URL, WORKHORSE_APP, WORKHORSE_HEARTBEAT_MS,
 * WORKHORSE_SAFETY_MARGIN_MS, WORKHORSE_MAX_FANOUT, ... (see src/tick/env.ts).
 */
export function loadTickEnv(env: Record<string, string | undefined> = process.env): TickEnv {
  return parseTickEnv(env);
}

/** A secret is read again once it is this old (rotation reaches a warm container). */
export const DEFAULT_SECRETS_MAX_AGE_MS = 5 * 60_000;
/** A secret is never read twice within this interval, whatever fails. */
export const DEFAULT_SECRETS_MIN_REFRESH_MS = 10_000;

const secretsEnvSchema = z.object({
  WORKHORSE_SECRETS_ENDPOINT: z.url().optional(),
  WORKHORSE_SECRETS_MAX_AGE_MS: envInteger().pipe(z.number().int().min(1000).max(86_400_000)).default(DEFAULT_SECRETS_MAX_AGE_MS),
  WORKHORSE_SECRETS_MIN_REFRESH_MS: envInteger().pipe(z.number().int().min(0).max(3_600_000)).default(DEFAULT_SECRETS_MIN_REFRESH_MS),
});

/** How the Lambda handlers read the variables given as secrets (X_SECRET_ARN instead of X). */
export interface SecretsConfig {
  references: SecretReference[];
  /** A Secrets Manager endpoint override (tests, local stacks). */
  endpoint: string | undefined;
  maxAgeMs: number;
  minRefreshMs: number;
}

export interface RuntimeEnvironment {
  /** A copy of the environment; the variables given as secrets are not filled in yet. */
  env: Record<string, string | undefined>;
  secrets: SecretsConfig;
}

/** The environment of a Lambda handler and its secret references, before any secret is read. */
export function loadRuntimeEnvironment(env: Record<string, string | undefined> = process.env): RuntimeEnvironment {
  const keys = Object.keys(secretsEnvSchema.shape) as (keyof typeof secretsEnvSchema.shape)[];
  const picked = Object.fromEntries(keys.map((k) => [k, env[k] || undefined]));
  const e = parseConfig(secretsEnvSchema, picked, 'environment');
  return {
    env: { ...env },
    secrets: {
      references: parseSecretReferences(env),
      endpoint: e.WORKHORSE_SECRETS_ENDPOINT,
      maxAgeMs: e.WORKHORSE_SECRETS_MAX_AGE_MS,
      minRefreshMs: e.WORKHORSE_SECRETS_MIN_REFRESH_MS,
    },
  };
}

/** The database URL, or the one ConfigError every entry point gives when it is missing. */
export function requireDatabaseUrl(env: Pick<EnvConfig, 'databaseUrl'>, who: string): string {
  if (env.databaseUrl) return env.databaseUrl;
  const message = `DATABASE_URL is not set (nor DATABASE_URL_SECRET_ARN): ${who} needs the database URL`;
  throw new ConfigError(message, [{ path: ['DATABASE_URL'], message: 'required' }]);
}
