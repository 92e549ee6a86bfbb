// Shared set-up for the HTTP tests: an app over a real test database, the
// secrets and token it accepts, and request builders that sign or carry the
// bearer token.
import type { Hono } from 'hono';
import { createClient, type Client } from '../../src/client/client.js';
import { createApp } from '../../src/http/createApp.js';
import type { HttpAppConfig } from '../../src/http/appConfig.js';
import type { HttpEnv } from '../../src/http/env.js';
import type { TickRequest, TickSummary } from '../../src/http/tickRunner.js';
import { signRequest } from '../../src/signing/index.js';
import type { TestDatabase } from '../helpers/db.js';
import testApp from './fixtures/app.js';

export const SECRET = 'current-secret-0123456789';
export const NEXT_SECRET = 'next-secret-0123456789abcdef';
export const TOKEN = 'api-token-0123456789abcdef';

export interface FakeTick {
  fn: (r: TickRequest) => Promise<TickSummary>;
  calls: TickRequest[];
}

/** A tick runner that records its calls and runs nothing. */
export function fakeTick(): FakeTick {
  const calls: TickRequest[] = [];
  return {
    calls,
    fn: async (r) => {
      calls.push(r);
      return { claimed: 0, succeeded: 0, failed: 0, retried: 0, suspended: 0, lost: 0, recovered: 0, slotsFired: 0, fannedOut: 0, skippedTimeout: 0, msLeft: r.budgetMs };
    },
  };
}

export interface HttpHarness {
  client: Client;
  app: Hono<HttpEnv>;
  tick: FakeTick;
}

export function buildHttp(db: TestDatabase, overrides: Partial<HttpAppConfig> = {}): HttpHarness {
  const client = createClient({ connectionString: db.url, poolMax: 4 });
  const tick = fakeTick();
  const app = createApp({
    client,
    app: testApp,
    signingSecrets: [SECRET, NEXT_SECRET],
    apiToken: TOKEN,
    tick: tick.fn,
    log: () => undefined,
    ...overrides,
  });
  return { client, app, tick };
}

export interface SignOptions {
  secret?: string;
  timestamp?: number;
  headers?: Record<string, string>;
}

export async function signed(app: Hono<HttpEnv>, method: string, path: string, body?: string, o: SignOptions = {}): Promise<Response> {
  const sig = await signRequest({ secret: o.secret ?? SECRET, method, path, body, timestamp: o.timestamp });
  return app.request(path, { method, body, headers: { 'content-type': 'application/json', ...sig, ...o.headers } });
}

export async function withToken(app: Hono<HttpEnv>, method: string, path: string, body?: unknown, token = TOKEN): Promise<Response> {
  return app.request(path, {
    method,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
  });
}

export async function countJobs(db: TestDatabase): Promise<number> {
  const r = await db.pool.query<{ n: string }>('select count(*) as n from workhorse.jobs');
  return Number(r.rows[0]!.n);
}

/** The JSON error body every failure carries. */
export interface ErrorJson {
  error: { code: string; message: string; issues?: { path: (string | number)[]; message: string }[] };
}
