// Job lifecycle events through the outbox: a namespace that asks for them
// gets one event per settlement, written in the settlement's own statement
// (workhorse.job.succeeded with the result, workhorse.job.failed for an
// attempt that will be retried, workhorse.job.dead for a job failed for
// good), delivered to the sinks in order per job; a decision a job waits
// for is published when the wait opens (workhorse.job.decision), once;
// an attempt ended by the recovery pass is a failure like a settled one;
// an operator's cancel publishes workhorse.job.cancelled; turned off, none.
// An app that drops its sinks turns them off with outbox: { lifecycle: [] }
// (the choice is stored per namespace and outlived the option, so events
// nothing delivered piled up, and the option refused to be given without a
// sink).
// The built-in sys.* jobs publish none (each sys.outbox pass published an
// event about itself, so the sinks were never quiet).
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as z from 'zod';
import { Client } from '../../src/client/client.js';
import { ConfigError } from '../../src/errors.js';
import { defineJob } from '../../src/client/defineJob.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver.js';

const Ok = defineJob({ type: 'lc.ok', schema: z.object({ n: z.number() }) });
const Approval = defineJob({ type: 'lc.approval', schema: z.object({ order: z.number() }) });
const Flaky = defineJob({ type: 'lc.flaky', schema: z.object({}), retry: { maxAttempts: 2, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } } });

let db: TestDatabase;
let client: Client;
let r: WebhookReceiver;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url, jobs: [Ok, Flaky, Approval] });
  r = await startWebhookReceiver('lifecycle-secret-0123456789');
});
afterAll(async () => {
  await r.close();
  await client.close();
  await db.drop();
});

function start(lifecycle: ('succeeded' | 'failed' | 'dead' | 'decision')[]): () => Promise<void> {
  const worker = new Worker(client, {
    pollMs: 50,
    scheduleNamespaces: ['sys'],
    outbox: { sinks: [webhookSink({ url: r.url, secret: 'lifecycle-secret-0123456789', topics: ['workhorse.job.*'] })], lifecycle, everyMs: 1000 },
  });
  worker.handle(Ok, async (p) => ({ doubled: p.n * 2 }));
  worker.handle(Flaky, async () => {
    throw new Error('always');
  });
  worker.handle(Approval, async (p, ctx) => {
    const d = await ctx.waitForDecision('approve', { choices: ['ship', 'hold'], prompt: `ship order ${p.order}?`, timeoutMs: 3_600_000 });
    return { choice: d.choice };
  });
  const run = worker.run();
  return () => worker.stop().then(() => run);
}

const stored = async () => (await db.pool.query<{ events: string[] }>("select events from workhorse.outbox_lifecycle where namespace = 'default'")).rows[0]?.events;

it('publishes succeeded, failed and dead events of settlements, in order per job', async () => {
  const stop = start(['succeeded', 'failed', 'dead']);
  try {
    await waitFor(stored, (e) => e?.length === 3, { what: 'the lifecycle setting stored' });
    const ok = await client.enqueue(Ok, { n: 21 });
    const flaky = await client.enqueue(Flaky, {});
    await waitFor(() => r.accepted().length, (n) => n >= 3, { what: 'three lifecycle events delivered', timeoutMs: 30_000 });
    const events = r.accepted().map((q) => ({ topic: q.json.topic, key: q.json.key, payload: q.json.payload as Record<string, unknown> }));
    expect(events.find((e) => e.topic === 'workhorse.job.succeeded')).toMatchObject({
      key: `job:${ok.id}`,
      payload: { event: 'succeeded', jobId: ok.id, type: 'lc.ok', queue: 'default', attempt: 1, result: { doubled: 42 } },
    });
    const mine = events.filter((e) => e.key === `job:${flaky.id}`);
    expect(mine.map((e) => [e.topic, e.payload.attempt])).toEqual([
      ['workhorse.job.failed', 1],
      ['workhorse.job.dead', 2],
    ]);
    expect(mine[1]!.payload).toMatchObject({ maxAttempts: 2, error: { message: 'always' } });
    expect(r.accepted().every((q) => q.signatureOk)).toBe(true);
    // The built-in sys.* jobs that delivered them (sys.outbox) publish nothing about themselves.
    const sysRan = async () => (await db.pool.query<{ n: number }>("select count(*)::int as n from workhorse.jobs where type like 'sys.%' and status = 'succeeded'")).rows[0]!.n;
    await waitFor(sysRan, (n) => n >= 2, { what: 'two sys.outbox passes to succeed', timeoutMs: 10_000 });
    const sysEvents = await db.pool.query<{ n: number }>("select count(*)::int as n from workhorse.outbox_events where payload->>'type' like 'sys.%'");
    expect(sysEvents.rows[0]!.n).toBe(0);
  } finally {
    await stop();
  }
});

it('publishes a decision a job waits for when the wait opens, once, however often the job replays', async () => {
  const stop = start(['decision']);
  try {
    await waitFor(stored, (e) => e?.length === 1 && e[0] === 'decision', { what: 'the lifecycle setting stored' });
    const before = r.accepted().length;
    const { id } = await client.enqueue(Approval, { order: 7 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'waiting', { what: 'the job to wait for its decision' });
    await waitFor(() => r.accepted().length, (n) => n > before, { what: 'the decision event delivered', timeoutMs: 30_000 });
    const events = r.accepted().slice(before).map((q) => q.json as { topic: string; key: string; payload: Record<string, unknown> });
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      topic: 'workhorse.job.decision',
      key: `job:${id}`,
      payload: { event: 'decision', jobId: id, type: 'lc.approval', name: 'approve', choices: ['ship', 'hold'], prompt: 'ship order 7?' },
    });
    // Written as toISOString writes times, like the envelope's publishedAt (it was PostgreSQL's text form).
    expect(events[0]!.payload.timeoutAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    // Deciding resumes the job; the replay reaches the same wait, resolved, and publishes nothing new.
    await client.decide(id, 'approve', { choice: 'ship', by: 'ops' });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job to finish' });
    await sleep(300);
    const decisions = await db.pool.query<{ n: number }>(
      "select count(*)::int n from workhorse.outbox_events where topic = 'workhorse.job.decision' and key = $1",
      [`job:${id}`],
    );
    expect(decisions.rows[0]!.n).toBe(1);
  } finally {
    await stop();
  }
});

it('publishes failed, then dead, for attempts that end through recovery; nothing for a claim that never started', async () => {
  await db.pool.query("select workhorse.set_outbox_lifecycle_v1('default', array['failed', 'dead'])");
  await db.pool.query("select workhorse.register_worker_v1('default', 'ghost', 'b1', 'process', array['default'], array['lc.flaky'], 1, 1000, null)");
  const events = async (id: string) =>
    (
      await db.pool.query<{ topic: string; payload: { attempt: number; maxAttempts: number; error: { name: string; worker: string } } }>(
        'select topic, payload from workhorse.outbox_events where key = $1 order by id',
        [`job:${id}`],
      )
    ).rows;
  /** The ghost claims the job (its handler started, or not), stops heartbeating, and a peer's recovery pass runs. */
  const claimAndLapse = async (started: boolean) => {
    const claimed = await db.pool.query(
      "select id from workhorse.claim_many_v1('default', 'ghost', array['default'], array['lc.flaky'], 1, 60000, null, $1)",
      [started ? 1 : 0],
    );
    expect(claimed.rowCount).toBe(1);
    await db.pool.query("update workhorse.job_runtime set expires_at = now() - interval '1 second' where worker_id = 'ghost'");
    expect((await db.pool.query<{ n: number }>("select workhorse.recover_expired_v1('default') as n")).rows[0]!.n).toBe(1);
  };
  const { id } = await client.enqueue(Flaky, {});
  await claimAndLapse(false);
  expect(await events(id)).toEqual([]);
  await claimAndLapse(true);
  await claimAndLapse(true);
  expect((await client.getJob(id))!.status).toBe('failed');
  const got = await events(id);
  expect(got.map((e) => e.topic)).toEqual(['workhorse.job.failed', 'workhorse.job.dead']);
  expect(got.map((e) => [e.payload.attempt, e.payload.maxAttempts])).toEqual([
    [1, 2],
    [2, 2],
  ]);
  for (const e of got) expect(e.payload.error).toMatchObject({ name: 'LeaseExpired', worker: 'ghost' });
});

it('publishes cancelled for each job an operator cancels, ready or running, once; nothing when not asked for', async () => {
  const cancelled = async (id: string) =>
    (
      await db.pool.query<{ topic: string; payload: Record<string, unknown> }>(
        "select topic, payload from workhorse.outbox_events where key = $1 and topic = 'workhorse.job.cancelled' order by id",
        [`job:${id}`],
      )
    ).rows;
  await db.pool.query("select workhorse.set_outbox_lifecycle_v1('default', array['succeeded'])");
  const quiet = await client.enqueue(Ok, { n: 0 }, { delayMs: 60_000 });
  await client.cancel(quiet.id);
  expect(await cancelled(quiet.id)).toEqual([]);

  await db.pool.query("select workhorse.set_outbox_lifecycle_v1('default', array['cancelled'])");
  const ready = await client.enqueue(Ok, { n: 1 }, { delayMs: 60_000 });
  await client.cancel(ready.id);
  await client.cancel(ready.id); // already cancelled: no second event
  expect(await cancelled(ready.id)).toEqual([
    {
      topic: 'workhorse.job.cancelled',
      payload: { event: 'cancelled', jobId: ready.id, type: 'lc.ok', queue: 'default', attempt: 0, maxAttempts: 25, wasRunning: false },
    },
  ]);

  await db.pool.query("select workhorse.register_worker_v1('default', 'holder', 'b1', 'process', array['default'], array['lc.flaky'], 1, 1000, null)");
  const running = await client.enqueue(Flaky, {});
  const claimed = await db.pool.query("select id from workhorse.claim_many_v1('default', 'holder', array['default'], array['lc.flaky'], 1, 60000, null, 1)");
  expect(claimed.rows.map((x) => String(x.id))).toEqual([running.id]);
  await client.cancel(running.id);
  expect((await cancelled(running.id)).map((e) => e.payload)).toEqual([
    { event: 'cancelled', jobId: running.id, type: 'lc.flaky', queue: 'default', attempt: 1, maxAttempts: 2, wasRunning: true },
  ]);
  await expect(db.pool.query("select workhorse.set_outbox_lifecycle_v1('default', array['cancel'])")).rejects.toMatchObject({ code: 'WH422' });
});

it('publishes nothing once turned off', async () => {
  const stop = start([]);
  try {
    await waitFor(stored, (e) => e?.length === 0, { what: 'the lifecycle setting cleared' });
    const before = await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.outbox_events');
    const { id } = await client.enqueue(Ok, { n: 1 });
    await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job to succeed' });
    await sleep(200);
    const after = await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.outbox_events');
    expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
  } finally {
    await stop();
  }
});

it('turns events off for an app that drops its sinks: outbox: { lifecycle: [] } alone, which delivers nothing', async () => {
  const jobEvents = async (id: string) => (await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.outbox_events where key = $1', [`job:${id}`])).rows[0]!.n;
  const stopOn = start(['succeeded']);
  try {
    await waitFor(stored, (e) => e?.length === 1 && e[0] === 'succeeded', { what: 'the lifecycle setting stored' });
    const { id } = await client.enqueue(Ok, { n: 1 });
    await waitFor(() => jobEvents(id), (n) => n === 1, { what: 'the succeeded event written' });
  } finally {
    await stopOn();
  }

  // The app's sinks are gone; the stored choice outlives them until it is turned off.
  const noSinkFor = (lifecycle: 'succeeded'[]) => new Worker(client, { scheduleNamespaces: ['sys'], outbox: { lifecycle } });

  const worker = noSinkFor([]);
  worker.handle(Ok, async (p) => ({ doubled: p.n * 2 }));
  const run = worker.run();
  try {
    await waitFor(stored, (e) => e?.length === 0, { what: 'the lifecycle setting cleared' });
    const ids = await Promise.all([1, 2, 3].map(async (n) => (await client.enqueue(Ok, { n })).id));
    for (const id of ids) await waitFor(() => client.getJob(id), (j) => j?.status === 'succeeded', { what: 'the job to succeed' });
    for (const id of ids) expect(await jobEvents(id)).toBe(0);
    // No sinks means no delivery: an event published meanwhile stays pending (no sink taking it would have counted it delivered).
    const { id: eventId } = await client.publish('lc.kept', { n: 1 });
    await sleep(500);
    expect((await client.outbox.list({ topic: 'lc.kept' })).map((e) => [e.id, e.state])).toEqual([[eventId, 'pending']]);
  } finally {
    await worker.stop();
    await run;
  }

  // Events asked for with nothing to deliver them are refused, as is an outbox option that says nothing.
  expect(() => noSinkFor(['succeeded'])).toThrow(ConfigError);
  expect(() => noSinkFor(['succeeded'])).toThrow(/outbox\.lifecycle.*need a sink/);
  expect(() => new Worker(client, { scheduleNamespaces: ['sys'], outbox: {} })).toThrow(/outbox\.sinks/);
});
