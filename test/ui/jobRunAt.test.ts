// The Job view's "run at" says when the job runs, and nothing an ended job
// will not do: a cancelled scheduled job read "in 7 min" and a cancelled
// job that waited for a signal "9999-01-01 (in 2911737 d)"; a job racing a
// decision (no timeout) against a sleep read "when what it waits for
// arrives", though its sleep wakes it. A real PostgreSQL and a worker.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { loadJob } from '../../src/http/ui/data/jobData.js';
import { jobView } from '../../src/http/ui/views/jobView.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Later = defineJob({ type: 'runat.later', schema: z.object({}) });
const Signalled = defineJob({ type: 'runat.signalled', schema: z.object({}) });
const Race = defineJob({ type: 'runat.race', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Later, Signalled, Race] });
  worker = new Worker(client, { pollMs: 50 })
    .handle(Signalled, async (_p, ctx) => ctx.waitForSignal('go'))
    .handle(Race, async (_p, ctx) => Promise.race([ctx.waitForDecision('ok', { choices: ['yes', 'no'] }), ctx.sleep('nap', 600_000)]));
  running = worker.run();
});
afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

const runAtText = async (id: string) => {
  const page = jobView(await loadJob(client, { id }, {}, Date.now()), null);
  const text = String(page.live).replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
  return /run at (.*?) created/.exec(text)![1]!.trim();
};

it('a cancelled scheduled job: its due time, and that it ended; not "in 10 min"', async () => {
  const { id } = await client.enqueue(Later, {}, { delayMs: 600_000 });
  expect(await runAtText(id)).toMatch(/\(in (9|10) min/);
  await client.cancel(id);
  expect(await runAtText(id)).toMatch(/UTC \(it ended: it runs again only if retried\)$/);
});

it('a cancelled job that waited for a signal with no timeout: nothing, not 9999', async () => {
  const { id } = await client.enqueue(Signalled, {});
  await waitFor(async () => (await client.getJob(id))?.status, (s) => s === 'waiting', { what: 'the job to wait' });
  expect(await runAtText(id)).toBe('when what it waits for arrives');
  await client.cancel(id);
  expect(await runAtText(id)).toBe('·');
});

it('a job racing a decision with no timeout against a sleep: when the sleep wakes it', async () => {
  const { id } = await client.enqueue(Race, {});
  await waitFor(async () => (await client.getJob(id))?.status, (s) => s === 'waiting', { what: 'the race to wait' });
  expect(await runAtText(id)).toMatch(/UTC \(in (9|10) min/);
});

it('a job due late in 9999 (runAt allows up to 9999-12-31): that time, not "when what it waits for arrives"', async () => {
  const { id } = await client.enqueue(Later, {}, { runAt: new Date('9999-12-31T23:59:59.999Z') });
  expect(await runAtText(id)).toMatch(/^9999-12-31 23:59:59 UTC \(in \d+ d/);
});
