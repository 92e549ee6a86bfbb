// The whole path through the HTTP app wired as it ships (createHttpService:
// environment, real runTick, schedules API): enqueue -> signed POST /tick ->
// GET /jobs/:id shows the job succeeded with its result.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { defineJob } from '../../src/client/defineJob.js';
import { createHttpService, type HttpService } from '../../src/http/service.js';
import { defineSchedule } from '../../src/schedules/defineSchedule.js';
import { Schedules } from '../../src/schedules/schedules.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import testApp, { BuildReport, SendEmail } from './fixtures/app.js';
import { SECRET, signed, TOKEN, withToken } from './helpers.js';

let db: TestDatabase;
let svc: HttpService;

beforeAll(async () => {
  db = await createTestDatabase();
  svc = createHttpService({
    app: testApp,
    poolMax: 4,
    env: { DATABASE_URL: db.url, WORKHORSE_SIGNING_SECRET: SECRET, WORKHORSE_API_TOKEN: TOKEN, WORKHORSE_HTTP_TICK_BUDGET_MS: '8000' },
    overrides: { log: (m, e) => console.error(m, e) },
  });
});

afterAll(async () => {
  await svc.close();
  await db.drop();
});

describe('enqueue -> tick -> result over HTTP', () => {
  it('runs an enqueued job on a signed POST /tick and shows it succeeded with its result', async () => {
    const enq = await withToken(svc.app, 'POST', '/jobs', { type: SendEmail.type, payload: { to: 'ada@example.com', subject: 'hello' } });
    expect(enq.status).toBe(201);
    const { id } = (await enq.json()) as { id: string };

    const tick = await signed(svc.app, 'POST', '/tick', '');
    expect(tick.status).toBe(200);
    const summary = (await tick.json()) as Record<string, number>;
    expect(summary).toMatchObject({ claimed: 1, succeeded: 1, failed: 0, retried: 0, fannedOut: 0 });
    expect(summary.msLeft).toBeGreaterThan(0);

    const job = (await (await withToken(svc.app, 'GET', `/jobs/${id}`)).json()) as Record<string, unknown>;
    expect(job).toMatchObject({ id, status: 'succeeded', attempt: 1, result: { delivered: 'ada@example.com' } });
  });

  it('drains a batch in one tick and lists the succeeded jobs', async () => {
    const jobs = Array.from({ length: 5 }, (_, i) => ({ type: BuildReport.type, payload: { account: `acct-${i}`, rows: i } }));
    await withToken(svc.app, 'POST', '/jobs', { jobs });
    const summary = (await (await signed(svc.app, 'POST', '/tick', '{"budgetMs":5000}')).json()) as Record<string, number>;
    expect(summary).toMatchObject({ claimed: 5, succeeded: 5 });
    const page = (await (await withToken(svc.app, 'GET', '/jobs?type=report.build&status=succeeded')).json()) as {
      jobs: { result: { total: number } }[];
    };
    expect(page.jobs.map((j) => j.result.total).sort()).toEqual([0, 2, 4, 6, 8]);
  });

  it('leaves no tick worker registered and no lease behind', async () => {
    const { workers } = (await (await withToken(svc.app, 'GET', '/workers')).json()) as { workers: unknown[] };
    expect(workers).toEqual([]);
    const leases = await db.pool.query('select count(*)::int as n from workhorse.job_runtime');
    expect(leases.rows[0].n).toBe(0);
  });

  it('does not run a job whose handler the app lacks, and reports nothing claimed', async () => {
    const other = defineApp({
      jobs: [defineJob({ type: 'not.handled', schema: z.object({}) })],
      configure() {},
    });
    const partial = createHttpService({
      app: other,
      poolMax: 2,
      env: { DATABASE_URL: db.url, WORKHORSE_SIGNING_SECRET: SECRET, WORKHORSE_API_TOKEN: TOKEN },
    });
    const { id } = (await (await withToken(partial.app, 'POST', '/jobs', { type: 'not.handled', payload: {} })).json()) as { id: string };
    const summary = (await (await signed(partial.app, 'POST', '/tick', '{"budgetMs":3000}')).json()) as Record<string, number>;
    expect(summary.claimed).toBe(0);
    expect(((await (await withToken(partial.app, 'GET', `/jobs/${id}`)).json()) as { status: string }).status).toBe('ready');
    await partial.close();
  });

  it('lists the namespace schedules on GET /schedules', async () => {
    await new Schedules(svc.client).define(
      defineSchedule({ name: 'digest', everyMs: 3_600_000, job: SendEmail, payload: { to: 'ops@example.com', subject: 'digest' } }),
    );
    const { schedules } = (await (await withToken(svc.app, 'GET', '/schedules')).json()) as { schedules: { name: string }[] };
    expect(schedules.map((s) => s.name)).toContain('digest');
  });
});
