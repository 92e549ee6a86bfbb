// Durable waits (6): a signal or a decision that arrives after its wait's
// timeout, by the database clock, while no worker has resumed the job yet
// (the fleet is down, or a tick has not come). The outcome must not depend
// on how soon a worker looks: the signal and the decision are refused
// (ConflictError), a signal by key is not handed to the wait that timed
// out, the decision is no longer listed as pending, and when a worker
// resumes the jobs their waits time out.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ConflictError, DecisionTimeoutError, SignalTimeoutError } from '../../src/errors.js';
import { isSuspension } from '../../src/worker/suspension.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Offer = defineJob({ type: 'dx.offer', schema: z.object({ wait: z.enum(['signal', 'key', 'decision']) }) });

let db: TestDatabase;
let client: Client;

function startWorker(): { worker: Worker; running: Promise<void> } {
  const worker = new Worker(client, { workerId: `late-${Math.random()}`, concurrency: 4, heartbeatMs: 200, pollMs: 5000 });
  worker.handle(Offer, async (p, ctx) => {
    try {
      if (p.wait === 'decision') return await ctx.waitForDecision('accept', { choices: ['yes', 'no'], timeoutMs: 300 });
      return await ctx.waitForSignal('accept', { timeoutMs: 300, key: p.wait === 'key' ? 'offer:1' : undefined });
    } catch (err) {
      if (isSuspension(err)) throw err;
      if (err instanceof SignalTimeoutError || err instanceof DecisionTimeoutError) return { expired: err.name };
      throw err;
    }
  });
  return { worker, running: worker.run() };
}

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Offer], poolMax: 4 });
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

describe('after a wait timed out while no worker looked', () => {
  it('refuses the signal and the decision, keeps the key signal from the timed-out wait, and the jobs time out', async () => {
    let { worker, running } = startWorker();
    const ids = {
      signal: (await client.enqueue(Offer, { wait: 'signal' })).id,
      key: (await client.enqueue(Offer, { wait: 'key' })).id,
      decision: (await client.enqueue(Offer, { wait: 'decision' })).id,
    };
    for (const id of Object.values(ids)) await waitFor(() => client.getJob(id), (j) => j!.status === 'waiting', { what: `job ${id} to wait` });
    await worker.stop();
    await running;
    await sleep(800); // every timeout has passed; nobody resumed the jobs

    await expect(client.signal(ids.signal, 'accept', 1)).rejects.toBeInstanceOf(ConflictError);
    await expect(client.decide(ids.decision, 'accept', { choice: 'yes', by: 'late' })).rejects.toBeInstanceOf(ConflictError);
    expect(await client.pendingDecisions()).toEqual([]);
    // Kept for the next wait on the key, not for the one that timed out.
    expect(await client.signalKey('offer:1', 'accept', 2)).toEqual({ outcome: 'kept', jobId: null });

    ({ worker, running } = startWorker());
    try {
      for (const [wait, id] of Object.entries(ids)) {
        const done = await waitFor(() => client.getJob(id), (j) => j!.status === 'succeeded', { what: `job ${id} to resume` });
        expect(done!.result).toEqual({ expired: wait === 'decision' ? 'DecisionTimeoutError' : 'SignalTimeoutError' });
      }
      const kept = await db.pool.query('select consumed_at from workhorse.job_signals where key = $1', ['offer:1']);
      expect(kept.rows).toEqual([{ consumed_at: null }]);
    } finally {
      await worker.stop();
      await running;
    }
  });
});
