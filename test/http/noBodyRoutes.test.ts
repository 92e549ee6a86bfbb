// The POST routes that take no body (retry a job, pause or resume a queue or
// a worker) read it as every JSON route does, over a real socket: none, an
// empty one or `{}` is accepted; a key is 400 validation_failed naming it,
// bad JSON 400, another Content-Type 415, and each refusal leaves the
// database as it was (the queue not paused, the worker not paused, the job
// not retried). Before, they ignored whatever was sent: `{"paused":false}`
// to /pause paused the queue.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, TOKEN, type ErrorJson, type HttpHarness } from './helpers.js';
import { startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;
let failedJob: string;

const WORKER = 'host-a:1:abc';

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db);
  server = await startServer(h.app);
  await db.pool.query(`insert into workhorse.worker_registry (namespace, id, heartbeat_ms) values ('default', $1, 1000)`, [WORKER]);
  const job = await h.client.enqueue('report.build', { account: 'a', rows: 1 });
  await db.pool.query(`update workhorse.jobs set status = 'failed', attempt = 1, finished_at = now() where id = $1`, [job.id]);
  failedJob = job.id;
});

beforeEach(async () => {
  await h.client.admin.resumeQueue('reports');
  await h.client.admin.setWorkerPaused(WORKER, false);
});

afterAll(async () => {
  await server.close();
  await h.client.close();
  await db.drop();
});

function post(path: string, body: string | undefined, contentType?: string): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method: 'POST',
    body: body === undefined ? undefined : new TextEncoder().encode(body),
    headers: { authorization: `Bearer ${TOKEN}`, ...(contentType ? { 'content-type': contentType } : {}) },
  });
}

async function state(): Promise<{ queuePaused: boolean; workerPaused: boolean; jobStatus: string }> {
  const q = await h.client.admin.listQueues();
  const w = await h.client.admin.listWorkers();
  const job = await h.client.getJob(failedJob);
  return {
    queuePaused: q.find((x) => x.name === 'reports')?.paused ?? false,
    workerPaused: w.find((x) => x.id === WORKER)!.operatorPaused,
    jobStatus: job!.status,
  };
}

const ROUTES = () => ['/queues/reports/pause', `/workers/${WORKER}/pause`, `/jobs/${failedJob}/retry`];

describe('POST routes that take no body', () => {
  it.each([
    ['a key', '{"paused":false}', 'application/json', 400, 'validation_failed', '"paused"'],
    ['a JSON value that is not an object', '[1]', 'application/json', 400, 'validation_failed', 'takes no body'],
    ['bad JSON', 'notjson', 'application/json', 400, 'validation_failed', 'not valid JSON'],
    ['text', 'hello', 'text/plain', 415, 'unsupported_media_type', 'application/json'],
  ])('refuse %s and change nothing', async (_what, body, contentType, status, code, says) => {
    const before = await state();
    for (const path of ROUTES()) {
      const res = await post(path, body, contentType);
      const json = (await res.json()) as ErrorJson;
      expect(res.status, `${path}: ${JSON.stringify(json)}`).toBe(status);
      expect(json.error.code).toBe(code);
      expect(json.error.message).toContain(says);
    }
    expect(await state()).toEqual(before);
  });

  it.each([
    ['no body', undefined, undefined],
    ['an empty body', '', 'application/json'],
    ['{}', '{}', 'application/json'],
    ['{} with no Content-Type', ' {} ', undefined],
  ])('accept %s', async (_what, body, contentType) => {
    expect((await post('/queues/reports/pause', body, contentType)).status).toBe(200);
    expect((await post(`/workers/${WORKER}/pause`, body, contentType)).status).toBe(200);
    expect(await state()).toMatchObject({ queuePaused: true, workerPaused: true });
  });

  it('retry with {} still retries', async () => {
    const res = await post(`/jobs/${failedJob}/retry`, '{}', 'application/json');
    expect(res.status).toBe(200);
    expect((await state()).jobStatus).toBe('ready');
  });
});
