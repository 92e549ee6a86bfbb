// Foundation (6b): cancel and retry. Cancel ends a job that has not ended —
// a running one loses its lease at once, so its handler is aborted and its
// settlement refused. Retry gives a failed or cancelled job a fresh attempt
// budget; a succeeded or running job cannot be retried. Each answers with
// the record its own change left, however calls race.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ConflictError, NotFoundError, StaleLeaseError, ValidationError } from '../../src/errors.js';
import { PermanentJobError } from '../../src/errorJson.js';
import { Worker } from '../../src/worker/worker.js';
import type { HandlerContext } from '../../src/worker/context.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { attemptsOf, jobRow } from './support/rows.js';

const Task = defineJob({ type: 'fx.task', schema: z.object({ mode: z.enum(['ok', 'fail', 'hang']) }), retry: { maxAttempts: 2 } });

let db: TestDatabase;
let client: Client;
const workers: Worker[] = [];
const contexts = new Map<string, HandlerContext>();

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Task], poolMax: 6 });
});

afterEach(async () => {
  await Promise.all(workers.splice(0).map((w) => w.stop({ hard: true })));
});

afterAll(async () => {
  await client?.close();
  await db?.drop();
});

function worker(id: string, heartbeatMs = 60_000): Worker {
  const w = new Worker(client, { workerId: id, listen: false, heartbeatMs });
  w.handle(Task, async (p, ctx) => {
    contexts.set(ctx.job.id, ctx);
    if (p.mode === 'fail') throw new PermanentJobError('nope');
    if (p.mode === 'hang') await new Promise((r) => ctx.signal.addEventListener('abort', r, { once: true }));
    return 'done';
  });
  workers.push(w);
  return w;
}

describe('cancel', () => {
  it('cancels a ready job so no worker ever claims it', async () => {
    const { id } = await client.enqueue(Task, { mode: 'ok' });
    const cancelled = await client.cancel(id);
    expect(cancelled).toMatchObject({ id, status: 'cancelled' });
    expect(cancelled.finishedAt).toBeInstanceOf(Date);
    expect(await worker('c1').runOnce()).toBe(false);
    expect((await jobRow(db.pool, id)).status).toBe('cancelled');
  });

  it("cancels a running job: the lease is gone at once, the handler's signal fires on the next heartbeat, its settlement is refused", async () => {
    const { id } = await client.enqueue(Task, { mode: 'hang' });
    const w = worker('c2', 100);
    const stale = new Promise<StaleLeaseError>((r) => w.events.once('stale', (e) => r(e)));
    const run = w.runOnce();
    await waitFor(() => contexts.has(id), Boolean, { what: 'the handler to start' });

    expect((await client.cancel(id)).status).toBe('cancelled');
    expect((await db.pool.query('select * from workhorse.job_runtime where job_id = $1', [id])).rows).toEqual([]);

    const ctx = contexts.get(id)!;
    await waitFor(() => ctx.signal.aborted, Boolean, { what: 'the handler signal to fire' });
    expect(ctx.signal.reason).toBeInstanceOf(StaleLeaseError);
    expect(await stale).toBeInstanceOf(StaleLeaseError);
    await run;
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'cancelled', result: null });
    expect((await attemptsOf(db.pool, id)).map((a) => a.outcome)).toEqual(['cancelled']);
    await expect(ctx.progress(1)).rejects.toBeInstanceOf(StaleLeaseError);
  });

  it('leaves a terminal job as it is', async () => {
    const { id } = await client.enqueue(Task, { mode: 'ok' });
    await worker('c3').runOnce();
    expect((await client.cancel(id)).status).toBe('succeeded');
  });

  it('answers unknown and malformed ids with typed errors', async () => {
    await expect(client.cancel('999999')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.retry('999999')).rejects.toBeInstanceOf(NotFoundError);
    await expect(client.cancel('not-a-number')).rejects.toBeInstanceOf(ValidationError);
    // Each says what an id is, not zod's bare "Invalid input".
    await expect(client.getJob(1.5)).rejects.toThrow(/a job id is a positive integer: a string of digits/);
    await expect(client.getJob(null as never)).rejects.toThrow(/a job id is a positive integer: a string of digits/);
    await expect(client.cancel('99999999999999999999')).rejects.toThrow(/a job id is at most 2\^63-1/);
  });
});

describe('retry', () => {
  it('makes a failed job ready now with a fresh attempt budget, and it runs again', async () => {
    const { id } = await client.enqueue(Task, { mode: 'fail' });
    await worker('r1').runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'failed', attempt: 1 });

    await db.pool.query(`update workhorse.jobs set payload = '{"mode":"ok"}' where id = $1`, [id]);
    const retried = await client.retry(id);
    expect(retried).toMatchObject({ status: 'ready', attempt: 0, finishedAt: null });
    expect(retried.runAt.getTime()).toBeLessThanOrEqual(Date.now() + 1000);

    await worker('r2').runOnce();
    expect(await jobRow(db.pool, id)).toMatchObject({ status: 'succeeded', attempt: 1, result: 'done' });
  });

  it('makes a cancelled job ready again', async () => {
    const { id } = await client.enqueue(Task, { mode: 'ok' });
    await client.cancel(id);
    expect((await client.retry(id)).status).toBe('ready');
    await worker('r3').runOnce();
    expect((await jobRow(db.pool, id)).status).toBe('succeeded');
  });

  it('leaves a ready job that is already due as it is, its place among the due jobs kept', async () => {
    const { id } = await client.enqueue(Task, { mode: 'ok' }, { queue: 'due-retry' });
    await db.pool.query(`update workhorse.jobs set run_at = now() - interval '1 minute' where id = $1`, [id]);
    const before = await jobRow(db.pool, id);
    const answered = await client.retry(id);
    expect(answered).toMatchObject({ status: 'ready', attempt: 0 });
    expect(answered.runAt.getTime()).toBe(before.run_at.getTime());
    expect(await jobRow(db.pool, id)).toEqual(before);
  });

  it('refuses to retry a succeeded job with ConflictError and leaves it unchanged', async () => {
    const { id } = await client.enqueue(Task, { mode: 'ok' });
    await worker('r4').runOnce();
    const before = await jobRow(db.pool, id);
    await expect(client.retry(id)).rejects.toBeInstanceOf(ConflictError);
    expect(await jobRow(db.pool, id)).toEqual(before);
  });

  it('answers cancels and retries racing on one job with the state each left: a cancel returns cancelled, a retry ready (each read its record after the other had changed it)', async () => {
    const { id } = await client.enqueue(Task, { mode: 'ok' }, { delayMs: 3_600_000 });
    const seen = { cancel: new Set<string>(), retry: new Set<string>() };
    for (let round = 0; round < 15; round++) {
      const calls = Array.from({ length: 3 }, () => [
        client.cancel(id).then((j) => seen.cancel.add(j.status)),
        client.retry(id).then((j) => seen.retry.add(j.status)),
      ]).flat();
      await Promise.all(calls);
    }
    expect([...seen.cancel]).toEqual(['cancelled']);
    expect([...seen.retry]).toEqual(['ready']);
  });
});
