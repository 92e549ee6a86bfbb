// Durable waits (3): a human decision through HTTP. A job waits for an
// approval; GET /decisions lists it for a credential with the `read` or
// the `decide` scope (not for others); POST /jobs/:id/decisions/:name with a choice
// outside the wait's choices is a 400 and changes nothing; a valid one
// resumes the job with { choice, by, comment, at }, stored as the audit
// trail beside the prompt, the choices and when the wait opened. All over a
// real socket on loopback.
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { createApp } from '../../src/http/createApp.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import testApp from '../http/fixtures/app.js';
import { fakeTick } from '../http/helpers.js';

const Approval = defineJob({ type: 'dx.approval', schema: z.object({ order: z.number() }) });
const DECIDE = 'decide-token-0123456789abcd';
const READ = 'read-token-0123456789abcdef';
const SIGNAL = 'signal-token-0123456789abcd';
const ADMIN = 'admin-token-0123456789abcdef';

let db: TestDatabase;
let client: Client;
let httpClient: Client;
let worker: Worker;
let running: Promise<void>;
let server: ServerType;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Approval], poolMax: 4 });
  httpClient = createClient({ connectionString: db.url, poolMax: 4 });
  const app = createApp({
    client: httpClient,
    app: testApp,
    signingSecrets: ['current-secret-0123456789'],
    apiTokens: [
      { name: 'approvers', token: DECIDE, scopes: ['decide'] },
      { name: 'dashboard', token: READ, scopes: ['read'] },
      { name: 'webhooks', token: SIGNAL, scopes: ['signal'] },
      { name: 'ops', token: ADMIN, scopes: ['admin'] },
    ],
    tick: fakeTick().fn,
    log: () => undefined,
  });
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  worker = new Worker(client, { workerId: 'approver', concurrency: 2, heartbeatMs: 200 });
  worker.handle(Approval, async (p, ctx) => {
    const d = await ctx.waitForDecision('approve', { choices: ['approve', 'reject'], prompt: `Ship order ${p.order}?` });
    return { choice: d.choice, by: d.by, comment: d.comment, at: d.at.toISOString() };
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  if (server) await new Promise((r) => server.close(r));
  await client?.close();
  await httpClient?.close();
  await db?.drop();
});

function call(method: string, path: string, token: string, body?: unknown): Promise<Response> {
  return fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}

async function openWait(id: string) {
  return (await db.pool.query('select resolved_at, value from workhorse.job_waits where job_id = $1', [id])).rows[0];
}

describe('a decision over HTTP', () => {
  it('lists it, refuses a choice outside its choices, records the decision and resumes the job', async () => {
    const { id } = await client.enqueue(Approval, { order: 42 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'waiting', { what: 'the job to wait' });

    // Listing needs the read or the decide scope.
    expect((await call('GET', '/decisions', READ)).status).toBe(200);
    expect((await call('GET', '/decisions', SIGNAL)).status).toBe(403);
    const list = await call('GET', '/decisions', DECIDE);
    expect(list.status).toBe(200);
    const { decisions } = (await list.json()) as { decisions: Record<string, unknown>[] };
    expect(decisions).toEqual([
      expect.objectContaining({ jobId: id, name: 'approve', prompt: 'Ship order 42?', choices: ['approve', 'reject'], timeoutAt: null, type: 'dx.approval' }),
    ]);
    // The job record shows what it waits for and since when.
    const rec = (await (await call('GET', `/jobs/${id}`, READ)).json()) as { status: string; wait: Record<string, unknown> };
    expect(rec.status).toBe('waiting');
    expect(rec.wait).toMatchObject({ name: 'approve', kind: 'decision', choices: ['approve', 'reject'], prompt: 'Ship order 42?' });
    expect(typeof rec.wait.since).toBe('string');

    // Deciding needs the decide scope; a signal credential cannot.
    expect((await call('POST', `/jobs/${id}/decisions/approve`, SIGNAL, { choice: 'approve' })).status).toBe(403);
    // A choice outside the choices is a 400, and nothing changes.
    const bad = await call('POST', `/jobs/${id}/decisions/approve`, DECIDE, { choice: 'maybe', comment: 'hmm' });
    expect(bad.status).toBe(400);
    expect(((await bad.json()) as { error: { code: string; message: string } }).error).toMatchObject({ code: 'validation_failed' });
    expect(await openWait(id)).toEqual({ resolved_at: null, value: null });
    expect((await client.getJob(id))!.status).toBe('waiting');
    // Bad input is a 400 too, never a 500.
    expect((await call('POST', `/jobs/${id}/decisions/approve`, DECIDE, { choice: 'approve', extra: 1 })).status).toBe(400);
    expect((await call('POST', `/jobs/${id}/decisions/nope`, DECIDE, { choice: 'approve' })).status).toBe(404);

    const ok = await call('POST', `/jobs/${id}/decisions/approve`, DECIDE, { choice: 'approve', comment: 'looks fine' });
    expect(ok.status).toBe(200);
    const decision = (await ok.json()) as { choice: string; by: string; comment: string; at: string };
    expect(decision).toMatchObject({ choice: 'approve', by: 'approvers', comment: 'looks fine' });

    const done = await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job to finish' });
    expect(done!.result).toEqual({ choice: 'approve', by: 'approvers', comment: 'looks fine', at: new Date(decision.at).toISOString() });
    expect(done!.attempt).toBe(1);

    // The audit trail: who, what, when, with the prompt, choices and when it was asked.
    const audit = await db.pool.query(
      `select kind, prompt, choices, outcome, value->>'choice' as choice, value->>'by' as by, value->>'comment' as comment,
              started_at <= resolved_at as ordered
         from workhorse.job_waits where job_id = $1`,
      [id],
    );
    expect(audit.rows).toEqual([
      { kind: 'decision', prompt: 'Ship order 42?', choices: ['approve', 'reject'], outcome: 'done', choice: 'approve', by: 'approvers', comment: 'looks fine', ordered: true },
    ]);
    // Made once: a second decision is a conflict, and the list is empty.
    expect((await call('POST', `/jobs/${id}/decisions/approve`, DECIDE, { choice: 'reject' })).status).toBe(409);
    expect(((await (await call('GET', '/decisions', DECIDE)).json()) as { decisions: unknown[] }).decisions).toEqual([]);
  });

  it('lists, signals and cancels waiting jobs over HTTP', async () => {
    const { id } = await client.enqueue(Approval, { order: 7 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'waiting', { what: 'the job to wait' });
    const list = (await (await call('GET', '/jobs?status=waiting', READ)).json()) as { jobs: { id: string; status: string }[] };
    expect(list.jobs.map((j) => [j.id, j.status])).toEqual([[id, 'waiting']]);
    // A signal over HTTP, kept (the job waits for a decision, not for this signal).
    const sig = await call('POST', `/jobs/${id}/signals/note`, SIGNAL, { payload: { hi: 1 } });
    expect(sig.status).toBe(202);
    expect(await sig.json()).toEqual({ outcome: 'kept', jobId: id });
    expect((await call('POST', `/jobs/${id}/signals/note`, SIGNAL, { payload: { hi: 2 } })).status).toBe(409);
    expect((await call('POST', `/signals/order%3A7/paid`, SIGNAL, {})).status).toBe(202);
    // Cancelling a waiting job.
    const cancelled = await call('POST', `/jobs/${id}/cancel`, ADMIN);
    expect(cancelled.status).toBe(200);
    expect(((await cancelled.json()) as { status: string }).status).toBe('cancelled');
    expect(((await (await call('GET', '/decisions', DECIDE)).json()) as { decisions: unknown[] }).decisions).toEqual([]);
  });
});
