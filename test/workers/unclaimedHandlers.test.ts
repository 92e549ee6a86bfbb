// A long-lived worker says when it starts that it can never run a handler:
// a handler for a job type defined on a queue the worker does not claim
// from (defineJob({ queue: 'email' }) with the worker left at its default
// ['default']), or no handler at all. Both used to be silent while the jobs
// stayed ready forever. A worker whose queues cover its handlers says
// nothing, and so does one without handlers that fires schedule namespaces.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Email = defineJob({ type: 'uh.email', schema: z.object({ to: z.string() }), queue: 'email' });
const Ping = defineJob({ type: 'uh.ping', schema: z.object({}) });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Email, Ping], poolMax: 4 });
});

afterEach(() => {
  vi.restoreAllMocks();
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

/** Starts the worker, stops it at once, and answers the lines it warned with. */
async function warningsOf(worker: Worker): Promise<string[]> {
  const lines: string[] = [];
  vi.spyOn(console, 'warn').mockImplementation((line: unknown) => void lines.push(String(line)));
  const run = worker.run();
  await worker.stop();
  await run;
  return lines;
}

describe('a worker that can never run a handler', () => {
  it('names the job type, its queue and the queues it claims from', async () => {
    const { id } = await client.enqueue(Email, { to: 'ada@example.com' });
    const lines = await warningsOf(new Worker(client, { workerId: 'uh-mismatch', listen: false }).handle(Email, () => 'sent').handle(Ping, () => 'pong'));
    expect(lines).toEqual([
      '[workhorse] worker uh-mismatch: handles "uh.email", whose jobs go to queue "email", but claims only from "default": add "email" to its queues or it never runs them',
    ]);
    expect((await client.getJob(id))?.status).toBe('ready');
  });

  it('says so once per queue, naming its types (five, then how many more), not once per type', async () => {
    const types = Array.from({ length: 7 }, (_, i) => defineJob({ type: `uh.mail.${i}`, schema: z.object({}), queue: 'mail' }));
    const w = new Worker(client, { workerId: 'uh-many', listen: false });
    for (const t of types) w.handle(t, () => 'sent');
    expect(await warningsOf(w)).toEqual([
      '[workhorse] worker uh-many: handles "uh.mail.0", "uh.mail.1", "uh.mail.2", "uh.mail.3", "uh.mail.4" and 2 more, whose jobs all go to queue "mail", but claims only from "default": add "mail" to its queues or it never runs them',
    ]);
  });

  it('says a worker without handlers claims nothing', async () => {
    const lines = await warningsOf(new Worker(client, { workerId: 'uh-empty', listen: false }));
    expect(lines).toEqual(['[workhorse] worker uh-empty: no handlers: it claims nothing (bind job types with worker.handle() before run())']);
  });

  it('says nothing without handlers when it fires schedule namespaces (a worker kept for the sys slots: outbox, alerts, retention)', async () => {
    const lines = await warningsOf(new Worker(client, { workerId: 'uh-sys', listen: false, scheduleNamespaces: ['sys'] }));
    expect(lines).toEqual([]);
  });

  it('says nothing when its queues cover its handlers (a type named by string with no definition included)', async () => {
    const worker = new Worker(client, { workerId: 'uh-fine', listen: false, queues: ['email', 'default'] })
      .handle(Email, () => 'sent')
      .handle(Ping, () => 'pong')
      .handle('uh.undefined', () => 'ok');
    expect(await warningsOf(worker)).toEqual([]);
  });
});
