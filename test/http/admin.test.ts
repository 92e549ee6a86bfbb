// The operator routes through app.request(): queues, workers, schedules and
// the health check, with their 4xx (and 5xx) paths as JSON.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { createApp } from '../../src/http/createApp.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, fakeTick, signed, withToken, type ErrorJson, type HttpHarness } from './helpers.js';

let db: TestDatabase;
let h: HttpHarness;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { listSchedules: async () => [{ name: 'nightly', cron: '0 3 * * *', enabled: true }] });
});

afterAll(async () => {
  await h.client.close();
  await db.drop();
});

async function errorOf(res: Response, status: number): Promise<ErrorJson['error']> {
  expect(res.status).toBe(status);
  return ((await res.json()) as ErrorJson).error;
}

describe('queues', () => {
  it('lists queues with their counts', async () => {
    await withToken(h.app, 'POST', '/jobs', { type: 'report.build', payload: { account: 'a', rows: 1 } });
    const res = await withToken(h.app, 'GET', '/queues');
    expect(res.status).toBe(200);
    const { queues } = (await res.json()) as { queues: { name: string; ready: number; paused: boolean }[] };
    expect(queues).toContainEqual(expect.objectContaining({ name: 'reports', ready: 1, paused: false }));
  });

  it('counts failed and cancelled jobs per queue, and lists a queue that holds only those (as the CLI does)', async () => {
    const { id } = await h.client.enqueue('email.send', { to: 'dead@example.com', subject: 's' }, { queue: 'graveyard' });
    await h.client.cancel(id);
    const { queues } = (await (await withToken(h.app, 'GET', '/queues')).json()) as { queues: Record<string, unknown>[] };
    expect(queues.find((q) => q.name === 'graveyard')).toEqual({
      name: 'graveyard', paused: false, concurrencyLimit: null, rateLimit: null, ratePeriodMs: 1000, ready: 0, running: 0, waiting: 0, failed: 0, cancelled: 1,
    });
    expect(queues.find((q) => q.name === 'reports')).toMatchObject({ failed: 0, cancelled: 0 });
  });

  it('pauses and resumes a queue durably', async () => {
    const paused = await withToken(h.app, 'POST', '/queues/reports/pause');
    expect(await paused.json()).toEqual({ name: 'reports', paused: true });
    let { queues } = (await (await withToken(h.app, 'GET', '/queues')).json()) as { queues: { name: string; paused: boolean }[] };
    expect(queues.find((q) => q.name === 'reports')!.paused).toBe(true);
    expect(await (await withToken(h.app, 'POST', '/queues/reports/resume')).json()).toEqual({ name: 'reports', paused: false });
    ({ queues } = (await (await withToken(h.app, 'GET', '/queues')).json()) as { queues: { name: string; paused: boolean }[] });
    expect(queues.find((q) => q.name === 'reports')!.paused).toBe(false);
  });

  it('pauses and resumes sys, the built-in slots\' queue, while it holds no job', async () => {
    expect(await (await withToken(h.app, 'POST', '/queues/sys/pause')).json()).toEqual({ name: 'sys', paused: true });
    const { queues } = (await (await withToken(h.app, 'GET', '/queues')).json()) as { queues: { name: string; paused: boolean }[] };
    expect(queues.find((q) => q.name === 'sys')!.paused).toBe(true);
    expect(await (await withToken(h.app, 'POST', '/queues/sys/resume')).json()).toEqual({ name: 'sys', paused: false });
    expect((await errorOf(await withToken(h.app, 'POST', '/queues/nothing-here/pause'), 404)).code).toBe('not_found');
  });

  it('answers a malformed queue name with 400', async () => {
    const e = await errorOf(await withToken(h.app, 'POST', `/queues/${encodeURIComponent('bad name!')}/pause`), 400);
    expect(e.code).toBe('validation_failed');
  });

  it('requires credentials', async () => {
    expect((await errorOf(await h.app.request('/queues'), 401)).code).toBe('unauthorized');
    expect((await errorOf(await h.app.request('/queues/reports/pause', { method: 'POST' }), 401)).code).toBe('unauthorized');
  });
});

describe('workers', () => {
  it('lists the registry and pauses / resumes a worker by id', async () => {
    const worker = new Worker(h.client, { workerId: 'host-a:123:abc', listen: false, heartbeatMs: 1000 });
    worker.handle('email.send', async () => undefined);
    await worker.runOnce();
    try {
      const { workers } = (await (await withToken(h.app, 'GET', '/workers')).json()) as { workers: { id: string; operatorPaused: boolean }[] };
      expect(workers).toContainEqual(expect.objectContaining({ id: 'host-a:123:abc', operatorPaused: false }));
      const id = encodeURIComponent('host-a:123:abc');
      expect(await (await withToken(h.app, 'POST', `/workers/${id}/pause`)).json()).toEqual({ id: 'host-a:123:abc', paused: true });
      const after = (await (await withToken(h.app, 'GET', '/workers')).json()) as { workers: { id: string; operatorPaused: boolean }[] };
      expect(after.workers.find((w) => w.id === 'host-a:123:abc')!.operatorPaused).toBe(true);
      expect((await withToken(h.app, 'POST', `/workers/${id}/resume`)).status).toBe(200);
    } finally {
      await worker.stop();
    }
  });

  it('answers 404 for a worker that is not registered', async () => {
    const e = await errorOf(await withToken(h.app, 'POST', '/workers/ghost/pause'), 404);
    expect(e).toEqual({ code: 'not_found', message: 'worker "ghost" is not registered in namespace "default"' });
  });

  it('refuses a signed request unless the server gives signatures the route\'s scope', async () => {
    expect((await errorOf(await signed(h.app, 'GET', '/workers'), 401)).message).toMatch(/POST \/tick only/);
    const reader = buildHttp(db, { signedScopes: ['read'] });
    expect((await signed(reader.app, 'GET', '/workers')).status).toBe(200);
    expect((await errorOf(await signed(reader.app, 'POST', '/workers/ghost/pause'), 403)).code).toBe('forbidden');
    await reader.client.close();
  });
});

describe('schedules', () => {
  it('lists the schedules the configured source returns', async () => {
    const res = await withToken(h.app, 'GET', '/schedules');
    expect(await res.json()).toEqual({ schedules: [{ name: 'nightly', cron: '0 3 * * *', enabled: true }] });
  });

  it('answers a failing source with a bare 500 and logs the real error', async () => {
    const logged: unknown[] = [];
    const broken = buildHttp(db, {
      listSchedules: async () => {
        throw new Error('relation "workhorse.secret_table" does not exist');
      },
      log: (_m, err) => logged.push(err),
    });
    const res = await withToken(broken.app, 'GET', '/schedules');
    const text = await res.text();
    expect(res.status).toBe(500);
    expect(JSON.parse(text)).toEqual({ error: { code: 'internal', message: 'internal error' } });
    expect(text).not.toMatch(/secret_table/);
    expect(String(logged[0])).toMatch(/secret_table/);
    await broken.client.close();
  });
});

describe('GET /healthz', () => {
  it('answers 200 without credentials when the database is reachable and the schema matches', async () => {
    const res = await h.app.request('/healthz');
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ ok: true, namespace: 'default', schemaVersion: expect.any(Number) });
  });

  it('answers 503 schema_version when the schema is behind', async () => {
    const { createEmptyDatabase } = await import('../helpers/db.js');
    const empty = await createEmptyDatabase();
    const client = createClient({ connectionString: empty.url, poolMax: 1 });
    const app = createApp({ client, tick: fakeTick().fn });
    const e = await errorOf(await app.request('/healthz'), 503);
    expect(e.code).toBe('schema_version');
    expect(e.message).toMatch(/missing/);
    await client.close();
    await empty.drop();
  });

  it('answers 503 database_unreachable when the database does not answer', async () => {
    const client = createClient({ connectionString: 'postgres://nobody@127.0.0.1:1/none', poolMax: 1 });
    const app = createApp({ client, tick: fakeTick().fn });
    const e = await errorOf(await app.request('/healthz'), 503);
    expect(e).toEqual({ code: 'database_unreachable', message: 'the database did not answer' });
    await client.close();
  });
});

describe('createApp config', () => {
  it('refuses short secrets and unknown settings with a ConfigError naming them', () => {
    const client = createClient({ connectionString: 'postgres://x@127.0.0.1:1/none', poolMax: 1 });
    expect(() => createApp({ client, tick: fakeTick().fn, signingSecrets: ['short'] })).toThrow(/signingSecrets\.0: a secret must be at least 16/);
    expect(() => createApp({ client, tick: fakeTick().fn, port: 1 } as never)).toThrow(/config_invalid|Unrecognized key/);
    void client.close();
  });
});
