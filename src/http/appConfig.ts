// The settings createApp takes, validated once with zod: the client (with
// the job definitions enqueues are checked against), the credentials, the
// limits, the tick runner and the dashboard's session secret.
import * as z from 'zod';
import { appProblem, type WorkhorseApp } from '../app/defineApp.js';
import type { Client } from '../client/client.js';
import { notAClient } from '../client/notAClient.js';
import { DEFAULT_HTTP_TICK_BUDGET_MS, DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_BODY_READS, MIN_TICK_BUDGET_MS } from '../config.js';
import { DEFAULT_TOLERANCE_SEC } from '../signing/scheme.js';
import { parseConfig } from '../validation.js';
import { apiTokensSchema, bearerTokenSchema, combineTokens, secretSchema as secret, type ApiToken } from '../credentials/tokens.js';
import type { HealthCheck } from './healthCheck.js';
import { scopeSchema } from '../credentials/scopes.js';
import type { TickRunner } from './tickRunner.js';
import { DEFAULT_SESSION_TTL_MS, sessionSecretSchema, sessionTtlMsSchema } from './ui/session/sessionSettings.js';

const fn = <T>(what: string) => z.custom<T>((v) => typeof v === 'function', `${what} must be a function`);

const httpAppConfigSchema = z
  .object({
    client: z.custom<Client>().superRefine((v, ctx) => {
      const wrong = notAClient(v);
      if (wrong) ctx.addIssue({ code: 'custom', message: `client must be a workhorse Client: ${wrong}` });
    }),
    /** Its job definitions are registered on the client: POST /jobs accepts exactly these types. */
    app: z
      .custom<WorkhorseApp>()
      .superRefine((v, ctx) => {
        const problem = appProblem(v);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .optional(),
    /** Accepted HMAC secrets: [current] or [current, next] during a rotation. */
    signingSecrets: z.array(secret).max(2).default([]),
    /** A bearer token holding every scope (WORKHORSE_API_TOKEN). */
    apiToken: bearerTokenSchema.optional(),
    /** Bearer tokens with their scopes (WORKHORSE_API_TOKENS). */
    apiTokens: apiTokensSchema.default([]),
    /** Scopes a valid signature carries on the API routes; empty (the default) accepts signatures on POST /tick only. */
    signedScopes: z.array(scopeSchema).default([]),
    toleranceSec: z.number().int().min(1).max(3600).default(DEFAULT_TOLERANCE_SEC),
    maxBodyBytes: z.number().int().min(1024).max(64 * 1024 * 1024).default(DEFAULT_MAX_BODY_BYTES),
    /** Request bodies read at the same time; more get 503 with Retry-After. */
    maxBodyReads: z.number().int().min(1).max(10_000).default(DEFAULT_MAX_BODY_READS),
    /** A request body that takes longer to arrive gets 408. */
    bodyTimeoutMs: z.number().int().min(100).max(600_000).default(10_000),
    /** Budget of a POST /tick when the platform gives no deadline (on Lambda the invocation's time left bounds it). */
    tickBudgetMs: z.number().int().min(MIN_TICK_BUDGET_MS).max(900_000).default(DEFAULT_HTTP_TICK_BUDGET_MS),
    tick: fn<TickRunner>('tick'),
    /** Backs GET /healthz (default: a probe with its own one-connection pool on the client's database). */
    health: z
      .custom<HealthCheck>((v) => typeof v === 'object' && v !== null && typeof (v as HealthCheck).check === 'function', 'health must be a createHealthCheck() value')
      .optional(),
    /** Backs GET /schedules (default: the schedules API on the client's namespace). */
    listSchedules: fn<() => Promise<unknown[]>>('listSchedules').optional(),
    /** The verifier's clock in ms (defaults to Date.now); lets tests move time. */
    now: fn<() => number>('now').optional(),
    /** Signs the dashboard's session cookies (WORKHORSE_SESSION_SECRET); without it /ui accepts bearer headers only. */
    sessionSecret: sessionSecretSchema.optional(),
    /** How long a dashboard session lasts (WORKHORSE_SESSION_TTL_MS). */
    sessionTtlMs: sessionTtlMsSchema.default(DEFAULT_SESSION_TTL_MS),
    /** Where unexpected (500) errors are reported; defaults to console.error. */
    log: fn<(message: string, err: unknown) => void>('log').optional(),
  })
  .strict();

export type HttpAppConfig = z.input<typeof httpAppConfigSchema>;
/** The parsed config; `tokens` is `apiToken` (all scopes) and `apiTokens` together. */
export type ResolvedHttpAppConfig = z.output<typeof httpAppConfigSchema> & { tokens: ApiToken[] };

export function parseHttpAppConfig(config: HttpAppConfig): ResolvedHttpAppConfig {
  const c = parseConfig(httpAppConfigSchema, config, 'HTTP app config');
  return { ...c, signedScopes: [...new Set(c.signedScopes)], tokens: combineTokens(c.apiToken, c.apiTokens, 'apiToken', 'HTTP app config') };
}
