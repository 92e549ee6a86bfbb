// A worker process says when a job's attempt fails: one line per retried
// attempt and one when the job fails for good (a dead letter, with how to run
// it again). It said nothing; a failing job was visible only by reading the
// jobs. Successes are not logged, and `logFailures: false` turns the lines off.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, createWorkhorseAdapter, defineJob, defineWorkerProcess, runWorkerProcess, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Flaky = defineJob({ type: 'log.flaky', schema: z.object({}), queue: 'logq', retry: { maxAttempts: 2, backoff: { kind: 'fixed', baseMs: 50, maxMs: 50 } } });
const Fine = defineJob({ type: 'log.fine', schema: z.object({}), queue: 'logq' });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Flaky, Fine] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

async function runUntilDone(logFailures: boolean | undefined, ids: string[]): Promise<string[]> {
  const lines: string[] = [];
  const def = defineWorkerProcess({
    adapter: () => createWorkhorseAdapter({ connectionString: db.url, poolSize: 2, jobs: [Flaky, Fine] }),
    workers: [
      {
        options: { queues: ['logq'], pollMs: 50, workerId: 'logger' },
        configure: (w) => {
          w.handle(Flaky, () => {
            throw new Error('smtp said no\nsecond line');
          });
          w.handle(Fine, () => 'ok');
        },
      },
    ],
    ...(logFailures === undefined ? {} : { logFailures }),
  });
  const proc = await runWorkerProcess(def, { log: (l) => lines.push(l) });
  await waitFor(() => Promise.all(ids.map((id) => client.getJob(id))), (jobs) => jobs.every((j) => j?.status === 'failed' || j?.status === 'succeeded'), {
    what: 'the jobs ended',
  });
  proc.shutdown();
  await proc.done;
  return lines.filter((l) => l.includes('job '));
}

describe('a worker process', () => {
  it('logs each failed attempt, and the final one as a dead letter; not successes', async () => {
    const [flaky, fine] = await Promise.all([client.enqueue(Flaky, {}), client.enqueue(Fine, {})]);
    const lines = await runUntilDone(undefined, [flaky.id, fine.id]);
    expect(lines).toEqual([
      `[workhorse] worker logger: job ${flaky.id} (log.flaky) attempt 1 of 2 failed: smtp said no second line; it runs again after its backoff`,
      `[workhorse] worker logger: job ${flaky.id} (log.flaky) attempt 2 of 2 failed: smtp said no second line; the job failed for good (a dead letter: client.retry(id) or the dashboard's Retry runs it again)`,
    ]);
  });

  it('logs none of it with logFailures: false', async () => {
    const flaky = await client.enqueue(Flaky, {});
    expect(await runUntilDone(false, [flaky.id])).toEqual([]);
  });
});
