// A short POST /tick: the tick fits its safety margin to the budget, but
// never below the tight margin that leaves time to write the outcomes of
// the handlers it aborts and to deregister. With a margin of a quarter of a
// 100-150 ms budget, handlers that ignored their abort signal were claimed,
// their outcomes could not be written by the deadline, and the tick answered
// 503 database_unreachable from a healthy database, leaving leases and its
// registry row behind. Budgets shorter than 500 ms are refused (400 in the
// body, 503 no_time_left from a Lambda's time left).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob, type Client } from '../../src/index.js';
import { createApp } from '../../src/http/createApp.js';
import { httpTickTiming, tickRunnerFor } from '../../src/http/tickAdapter.js';
import { signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const SECRET = 'short-tick-secret-0123456789';
const Slow = defineJob({ type: 'short.slow', schema: z.object({}) });
/** A handler that ignores ctx.signal: it runs past the tick's abort instant. */
const app = defineApp({ jobs: [Slow], configure: (w) => w.handle(Slow, () => new Promise((r) => setTimeout(r, 2_000))) });

let db: TestDatabase;
let client: Client;
let http: ReturnType<typeof createApp>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Slow], poolMax: 4 });
  http = createApp({ client, app, signingSecrets: [SECRET], tick: tickRunnerFor(client, app), log: () => undefined });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function postTick(body: string, lambdaContext?: object): Promise<Response> {
  const headers = await signRequest({ secret: SECRET, method: 'POST', path: '/tick', body });
  return http.request('/tick', { method: 'POST', body, headers: { 'content-type': 'application/json', ...headers } }, lambdaContext ? ({ lambdaContext } as never) : undefined);
}

const count = async (sql: string) => (await db.pool.query<{ n: number }>(sql)).rows[0]!.n;

describe('a short POST /tick', () => {
  it('with the least budget, aborts the handlers that ignore their signal, writes their outcomes and deregisters, every time', async () => {
    for (let i = 0; i < 5; i++) {
      await client.enqueueMany([0, 1, 2].map(() => ({ job: Slow, payload: {} })));
      const res = await postTick('{"budgetMs":500}');
      const summary = (await res.json()) as Record<string, number>;
      expect(res.status, JSON.stringify(summary)).toBe(200);
      expect(summary.claimed, `round ${i}`).toBe(3);
      expect(summary.retried, `round ${i}`).toBe(3);
      expect(await count('select count(*)::int n from workhorse.job_runtime'), `leases left, round ${i}`).toBe(0);
      expect(await count("select count(*)::int n from workhorse.worker_registry where state = 'active'"), `registry rows left, round ${i}`).toBe(0);
      await db.pool.query("update workhorse.jobs set status = 'cancelled' where status = 'ready'");
    }
  });

  it('refuses a budget under 500 ms in the body (400) and from a Lambda time left (503 no_time_left), running nothing', async () => {
    const { id } = await client.enqueue(Slow, {});
    const res = await postTick('{"budgetMs":499}');
    expect(res.status).toBe(400);
    expect(((await res.json()) as { error: { issues: { path: string[] }[] } }).error.issues[0]!.path).toEqual(['budgetMs']);
    const late = await postTick('', { getRemainingTimeInMillis: () => 1_450 });
    expect(late.status).toBe(503);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('no_time_left');
    const job = await client.getJob(id);
    expect([job?.status, job?.attempt]).toEqual(['ready', 0]);
  });

  it('gets a safety margin of a quarter of its budget, at least 250 ms, at most the configured one', () => {
    const margin = (budgetMs: number, safetyMarginMs?: number) => httpTickTiming(budgetMs, { safetyMarginMs }).safetyMarginMs;
    expect([margin(500), margin(1_000), margin(2_000), margin(8_000), margin(60_000)]).toEqual([250, 250, 500, 1_000, 1_000]);
    expect([margin(500, 100), margin(8_000, 3_000), margin(300)]).toEqual([100, 2_000, 150]);
  });
});
