// Foundation (5): during a rolling deploy, old and new builds run side by
// side. A worker claims only the job types it has handlers for, so an old
// build never takes a job type it does not know; a build that has it does.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { jobRow } from './support/rows.js';

const SendEmail = defineJob({ type: 'email.send', schema: z.object({ to: z.string() }) });
const SendSms = defineJob({ type: 'sms.send', schema: z.object({ to: z.string() }) });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [SendEmail, SendSms], poolMax: 4 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop()));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

function build(id: string, buildId: string): Worker {
  const w = new Worker(client, { workerId: id, build: buildId, listen: false, heartbeatMs: 60_000 });
  workers.push(w);
  return w;
}

describe('rolling deploy', () => {
  it('never lets a worker without a handler for a type claim it, and lets a worker with it do so', async () => {
    const sms = await client.enqueue(SendSms, { to: '+15550100' });
    const ran: string[] = [];
    const oldBuild = build('old', 'v1').handle(SendEmail, (p) => void ran.push(`old:email:${p.to}`));
    expect(await oldBuild.runOnce()).toBe(false);
    expect(await jobRow(db.pool, sms.id)).toMatchObject({ status: 'ready', attempt: 0, execution: 0 });

    // The registry shows what each build can run.
    const newBuild = build('new', 'v2')
      .handle(SendEmail, (p) => void ran.push(`new:email:${p.to}`))
      .handle(SendSms, (p) => void ran.push(`new:sms:${p.to}`));
    await newBuild.runOnce();
    const registry = await client.admin.listWorkers();
    expect(registry.map((w) => [w.id, w.build, [...w.types].sort()])).toEqual([
      ['old', 'v1', ['email.send']],
      ['new', 'v2', ['email.send', 'sms.send']],
    ]);
    expect(ran).toEqual(['new:sms:+15550100']);
    expect(await jobRow(db.pool, sms.id)).toMatchObject({ status: 'succeeded', attempt: 1 });
  });

  it('lets the old build keep claiming the types it knows while the new type waits for the new build', async () => {
    const email = await client.enqueue(SendEmail, { to: 'a@example.com' });
    const sms = await client.enqueue(SendSms, { to: '+15550101' });
    const oldBuild = build('old-2', 'v1').handle(SendEmail, () => 'sent');
    expect(await oldBuild.runOnce()).toBe(true);
    expect((await jobRow(db.pool, email.id)).status).toBe('succeeded');
    expect((await jobRow(db.pool, sms.id)).status).toBe('ready');
    // Repeated passes of the old build still leave it alone.
    expect(await oldBuild.runOnce()).toBe(false);
    expect((await jobRow(db.pool, sms.id)).status).toBe('ready');
  });
});
