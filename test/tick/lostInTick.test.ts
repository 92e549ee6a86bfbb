// A job cancelled while a tick runs it: its settlement is refused (the lease
// ended), and the summary counted it in none of its outcomes, so claimed was
// more than succeeded + failed + retried + suspended with nothing saying why.
// It is `lost` now.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob, runTick, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Slow = defineJob({ type: 'lost.slow', schema: z.object({}) });
const Quick = defineJob({ type: 'lost.quick', schema: z.object({}) });
let release: (() => void) | undefined;
const app = defineApp({
  jobs: [Slow, Quick],
  configure: (w) => {
    // Ignores its signal: it ends only when the test lets it, after the cancel.
    w.handle(Slow, () => new Promise<void>((r) => (release = r)));
    w.handle(Quick, () => 'done');
  },
});

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Slow, Quick] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('a job cancelled while a tick runs it', () => {
  it('is counted as lost, so every claimed job is in one outcome', async () => {
    const slow = await client.enqueue(Slow, {});
    await client.enqueue(Quick, {});
    const tick = runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 10_000), scheduleNamespaces: [] });
    await waitFor(() => release, (r) => r !== undefined, { what: 'the slow handler to start' });
    await client.cancel(slow.id);
    release!();
    const summary = await tick;
    expect(summary).toMatchObject({ claimed: 2, succeeded: 1, failed: 0, retried: 0, suspended: 0, lost: 1 });
    expect((await client.getJob(slow.id))!.status).toBe('cancelled');
  });
});
