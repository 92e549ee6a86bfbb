// Durable waits (7): a wait resolved between its opening and the job's
// suspension. A handler that waits on several things at once (a decision
// raced against a join) opens each wait while it still holds its lease,
// then suspends on one of them. A decision or a child's end that arrives in
// that gap resolves its wait at once (decide_v1, wake_parents_v1) but does
// not wake the job, which is not waiting yet; the suspension must then make
// the job ready, whichever of its waits it names, or the job would wait for
// the other wait, perhaps forever. The interleaving is forced by calling
// the protocol functions on separate connections, in order: the handler's
// connection opens the waits, a sender's connection resolves one, the
// handler's connection suspends.
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, registerWorkerRow, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const NS = 'default';
const WORKER = 'gap-worker';
const CHOICES = ['yes', 'no'];
const Gap = defineJob({ type: 'dx.gap', schema: z.object({}) });
const Kid = defineJob({ type: 'dx.kid', schema: z.object({}) });

let db: TestDatabase;
let client: Client;
/** The connection the job's handler writes through. */
let handler: pg.Client;
/** The connection of whoever decides, signals or ends a child meanwhile. */
let sender: pg.Client;

interface Lease {
  id: string;
  execution: string;
}

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Gap, Kid], poolMax: 4 });
  handler = new pg.Client({ connectionString: db.url });
  sender = new pg.Client({ connectionString: db.url });
  await Promise.all([handler.connect(), sender.connect()]);
  await registerWorkerRow(handler, NS, WORKER, ['dx.gap', 'dx.kid']);
});

afterEach(async () => {
  await db.pool.query('truncate workhorse.jobs, workhorse.job_runtime, workhorse.job_waits, workhorse.job_signals, workhorse.job_children');
});

afterAll(async () => {
  await handler?.end();
  await sender?.end();
  await client?.close();
  await db?.drop();
});

async function enqueue(type: string, on: pg.Client = sender): Promise<string> {
  const r = await on.query<{ id: string }>('select id from workhorse.enqueue_v1($1, $2)', [NS, { type }]);
  return r.rows[0]!.id;
}

async function claim(type: string): Promise<Lease> {
  const r = await handler.query<Lease>(
    `select id::text, execution::text from workhorse.claim_v1($1, $2, array['default'], array[$3], 60000)`,
    [NS, WORKER, type],
  );
  expect(r.rows).toHaveLength(1);
  return r.rows[0]!;
}

/** ctx.spawn's transaction: the child is linked to the running parent under the fence. */
async function spawnChild(parent: Lease, name: string): Promise<string> {
  await handler.query('begin');
  await handler.query('select workhorse.begin_spawn_v1($1, $2, $3, $4)', [NS, parent.id, parent.execution, name]);
  const child = await enqueue('dx.kid', handler);
  await handler.query('select workhorse.link_child_v1($1, $2, $3, $4, $5, false)', [NS, parent.id, parent.execution, name, child]);
  await handler.query('commit');
  return child;
}

type Spec = { kind: 'decision' } | { kind: 'signal'; key?: string } | { kind: 'join'; children: string[] };

async function beginWait(lease: Lease, name: string, spec: Spec): Promise<{ resolved: boolean; outcome: string | null; value: unknown }> {
  const r = await handler.query(
    `select resolved, outcome, value from workhorse.begin_wait_v1($1, $2, $3, $4, $5, null, null, $6, $7, null, $8::bigint[], $9)`,
    [
      NS,
      lease.id,
      lease.execution,
      name,
      spec.kind,
      spec.kind === 'signal' ? (spec.key ?? null) : null,
      spec.kind === 'decision' ? CHOICES : null,
      spec.kind === 'join' ? `{${spec.children.join(',')}}` : null,
      spec.kind === 'join' ? 'all' : null,
    ],
  );
  return r.rows[0];
}

async function suspend(lease: Lease, wait: string): Promise<string> {
  const r = await handler.query<{ status: string }>('select status from workhorse.suspend_v1($1, $2, $3, $4)', [NS, lease.id, lease.execution, wait]);
  return r.rows[0]!.status;
}

async function decide(jobId: string, name: string): Promise<string> {
  const r = await sender.query<{ outcome: string }>('select outcome from workhorse.decide_v1($1, $2, $3, $4, $5, null)', [
    NS,
    jobId,
    name,
    'yes',
    'ops',
  ]);
  return r.rows[0]!.outcome;
}

/** A child ends: claimed and completed, its settlement waking the parent that joins it. */
async function completeChild(child: string): Promise<void> {
  const lease = await claim('dx.kid');
  expect(lease.id).toBe(child);
  const r = await sender.query('select * from workhorse.complete_many_v1($1, $2::bigint[], $3::bigint[], $4::jsonb[])', [
    NS,
    `{${lease.id}}`,
    `{${lease.execution}}`,
    [JSON.stringify('kid done')],
  ]);
  expect(r.rows).toHaveLength(1);
}

async function status(jobId: string): Promise<string> {
  const r = await db.pool.query<{ status: string }>('select status from workhorse.jobs where id = $1', [jobId]);
  return r.rows[0]!.status;
}

describe('a wait resolved after it opened and before the job suspended', () => {
  it('a decision made in the gap makes the job ready when it suspends on the join beside it; the replay sees the decision', async () => {
    const parent = await enqueue('dx.gap');
    const lease = await claim('dx.gap');
    const child = await spawnChild(lease, 'kid');
    expect(await beginWait(lease, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await beginWait(lease, 'kids', { kind: 'join', children: [child] })).toMatchObject({ resolved: false });
    // The job still holds its lease: decide_v1 resolves the wait but cannot wake it.
    expect(await decide(parent, 'approve')).toBe('decided');
    expect(await suspend(lease, 'kids')).toBe('ready');
    expect(await status(parent)).toBe('ready');

    // A worker resumes it: the replay finds the decision and wins the race.
    const worker = new Worker(client, { workerId: 'gap-replayer', concurrency: 1, heartbeatMs: 60_000, listen: false });
    worker.handle(Gap, async (_p, ctx) => {
      const kid = await ctx.spawn('kid', Kid, {});
      return Promise.race([
        ctx.waitForDecision('approve', { choices: CHOICES }).then((d) => ({ by: 'decision', choice: d.choice })),
        ctx.join('kids', [kid]).then(() => ({ by: 'join' })),
      ]);
    });
    try {
      await worker.runOnce();
      const done = await waitFor(() => client.getJob(parent), (j) => j!.status === 'succeeded', { what: 'the replay to finish' });
      expect(done!.result).toEqual({ by: 'decision', choice: 'yes' });
    } finally {
      await worker.stop();
    }
  });

  it("a child's end in the gap makes the job ready when it suspends on the decision beside it; the replay sees the join", async () => {
    const parent = await enqueue('dx.gap');
    const lease = await claim('dx.gap');
    const child = await spawnChild(lease, 'kid');
    expect(await beginWait(lease, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await beginWait(lease, 'kids', { kind: 'join', children: [child] })).toMatchObject({ resolved: false });
    // wake_parents_v1 resolves the join of the running parent but cannot wake it.
    await completeChild(child);
    expect(await suspend(lease, 'approve')).toBe('ready');

    const next = await claim('dx.gap');
    expect(next.id).toBe(parent);
    expect(BigInt(next.execution)).toBeGreaterThan(BigInt(lease.execution));
    expect(await beginWait(next, 'kids', { kind: 'join', children: [child] })).toEqual({
      resolved: true,
      outcome: 'done',
      value: [{ id: child, status: 'succeeded', result: 'kid done', error: null }],
    });
    // Waiting for the decision now parks it: the join was seen.
    expect(await beginWait(next, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await suspend(next, 'approve')).toBe('waiting');
    expect(await decide(parent, 'approve')).toBe('decided');
    expect(await status(parent)).toBe('ready');
  });

  it('a single wait resolved in the gap makes the job ready when it suspends on it', async () => {
    const decided = await enqueue('dx.gap');
    const a = await claim('dx.gap');
    expect(await beginWait(a, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await decide(decided, 'approve')).toBe('decided');
    expect(await suspend(a, 'approve')).toBe('ready');

    const joined = await enqueue('dx.gap');
    const b = await claim('dx.gap');
    const child = await spawnChild(b, 'kid');
    expect(await beginWait(b, 'kids', { kind: 'join', children: [child] })).toMatchObject({ resolved: false });
    await completeChild(child);
    expect(await suspend(b, 'kids')).toBe('ready');
    expect(await status(joined)).toBe('ready');
  });

  it('a plain signal sent in the gap is kept, and the suspension consumes it whichever wait it names', async () => {
    const parent = await enqueue('dx.gap');
    const lease = await claim('dx.gap');
    expect(await beginWait(lease, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await beginWait(lease, 'go', { kind: 'signal' })).toMatchObject({ resolved: false });
    const sent = await sender.query<{ outcome: string }>('select workhorse.signal_job_v1($1, $2, $3, $4) as outcome', [NS, parent, 'go', 7]);
    expect(sent.rows[0]!.outcome).toBe('kept');
    expect(await suspend(lease, 'approve')).toBe('ready');
    const next = await claim('dx.gap');
    expect(await beginWait(next, 'go', { kind: 'signal' })).toEqual({ resolved: true, outcome: 'done', value: 7 });
  });

  it('a signal by key sent in the gap is kept for the running job, and the suspension consumes it', async () => {
    const parent = await enqueue('dx.gap');
    const lease = await claim('dx.gap');
    expect(await beginWait(lease, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await beginWait(lease, 'go', { kind: 'signal', key: 'order:1' })).toMatchObject({ resolved: false });
    const sent = await sender.query('select outcome, job_id::text from workhorse.signal_key_v1($1, $2, $3, $4)', [NS, 'order:1', 'go', 8]);
    expect(sent.rows).toEqual([{ outcome: 'kept', job_id: parent }]);
    expect(await suspend(lease, 'approve')).toBe('ready');
    const next = await claim('dx.gap');
    expect(await beginWait(next, 'go', { kind: 'signal', key: 'order:1' })).toEqual({ resolved: true, outcome: 'done', value: 8 });
  });

  it('a wait resolved in an earlier run, which the replay saw, does not make the next suspension ready', async () => {
    const parent = await enqueue('dx.gap');
    const first = await claim('dx.gap');
    expect(await beginWait(first, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await beginWait(first, 'go', { kind: 'signal' })).toMatchObject({ resolved: false });
    expect(await suspend(first, 'approve')).toBe('waiting');
    expect(await decide(parent, 'approve')).toBe('decided');

    const second = await claim('dx.gap');
    expect(await beginWait(second, 'approve', { kind: 'decision' })).toMatchObject({ resolved: true });
    expect(await beginWait(second, 'go', { kind: 'signal' })).toMatchObject({ resolved: false });
    expect(await suspend(second, 'go')).toBe('waiting');
  });

  it('a wait resolved in the gap that the handler then reads again is not a reason to wake it', async () => {
    const parent = await enqueue('dx.gap');
    const lease = await claim('dx.gap');
    expect(await beginWait(lease, 'approve', { kind: 'decision' })).toMatchObject({ resolved: false });
    expect(await decide(parent, 'approve')).toBe('decided');
    // The same run reaches the wait again (a loop, a second call): it reads the decision.
    expect(await beginWait(lease, 'approve', { kind: 'decision' })).toMatchObject({ resolved: true });
    expect(await beginWait(lease, 'go', { kind: 'signal' })).toMatchObject({ resolved: false });
    expect(await suspend(lease, 'go')).toBe('waiting');
  });
});
