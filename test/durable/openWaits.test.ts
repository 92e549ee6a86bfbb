// Durable waits (19): what an operator sees of a job waiting on several
// waits. An approval raced against a deadline (Promise.race of a decision
// and a sleep) waits for both: the job resumes on the decision or at the
// deadline. GET /jobs/:id and the dashboard's Job view showed only the
// newest open wait (the sleep), so the job looked like it merely slept and
// the pending decision was nowhere on its page. Both now list every open
// wait (`waits`, newest first; `wait` is still the newest), and the
// Namespace table's note says how many more waits there are.
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

const READ = 'read-token-0123456789abcdef';
const Refund = defineJob({ type: 'dx.refund', schema: z.object({ order: z.number() }) });

let db: TestDatabase;
let client: Client;
let httpClient: Client;
let worker: Worker;
let running: Promise<void>;
let server: ServerType;
let base: string;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Refund], poolMax: 4 });
  httpClient = createClient({ connectionString: db.url, poolMax: 2 });
  const app = createApp({
    client: httpClient,
    app: testApp,
    signingSecrets: ['current-secret-0123456789'],
    apiTokens: [{ name: 'dashboard', token: READ, scopes: ['read'] }],
    tick: fakeTick().fn,
    log: () => undefined,
  });
  server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' });
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  worker = new Worker(client, { workerId: 'open-waits', concurrency: 2, heartbeatMs: 200 });
  worker.handle(Refund, async (p, ctx) =>
    Promise.race([
      ctx.waitForDecision('approve', { choices: ['refund', 'deny'], prompt: `Refund order ${p.order}?` }).then((d) => d.choice),
      ctx.sleep('deadline', 3_600_000).then(() => 'auto-refund'),
    ]),
  );
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

const get = (path: string) => fetch(`${base}${path}`, { headers: { authorization: `Bearer ${READ}` } });

describe('a job waiting on a decision raced against a deadline', () => {
  it('shows both waits over HTTP and on the Job view', async () => {
    const { id } = await client.enqueue(Refund, { order: 9 });
    await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: 'the refund to wait' });

    const res = await get(`/jobs/${id}`);
    expect(res.status).toBe(200);
    const job = (await res.json()) as { wait: { name: string }; waits: { name: string; kind: string; prompt: string | null }[] };
    expect(job.waits.map((w) => `${w.kind} ${w.name}`).sort()).toEqual(['decision approve', 'sleep deadline']);
    expect(job.wait.name).toBe(job.waits[0]!.name);
    expect(job.waits.find((w) => w.kind === 'decision')!.prompt).toBe('Refund order 9?');

    const page = await (await get(`/ui/jobs/${id}`)).text();
    expect(page).toContain('<code>approve</code>');
    expect(page).toContain('<code>deadline</code>');
    expect(page).toContain('Refund order 9?');
    expect(page).toContain('also waits for');

    // The Namespace table's note says there is more than the newest wait.
    const table = await (await get('/ui?status=waiting')).text();
    expect(table).toContain('(and 1 more wait)');
  });
});
