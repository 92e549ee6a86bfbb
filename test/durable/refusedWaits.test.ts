// A wait, spawn, join or step refused for its arguments fails the job at
// once, without retries: a retry would run the same code on the same
// payload and be refused the same way (it used to be retried until its
// attempts ran out). A fault in the handler's own code is still retried.
// An empty step name, a join of an id past 2^63-1 (it reached PostgreSQL's
// bigint check), and a decision with a prompt over 4,000 characters or more
// than 100 choices (stored whole, and sent with every pending decision) are
// refused the same way. A join of an id that is no job of the namespace (it resolved at once,
// with no result for that id), of the job itself, or of a job that is not
// its child (both waited forever: only a child's end wakes its parent) is
// such a refusal too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import type { HandlerContext } from '../../src/worker/context.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Child = defineJob({ type: 'refused.child', schema: z.object({ n: z.number() }) });
const Probe = defineJob({
  type: 'refused.probe',
  schema: z.object({ call: z.string() }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 1 } },
});

const CALLS: Record<string, (ctx: HandlerContext) => Promise<unknown>> = {
  sleepNaN: (ctx) => ctx.sleep('nap', Number.NaN),
  sleepUntilInvalid: (ctx) => ctx.sleepUntil('later', new Date(Number.NaN)),
  signalTimeout: (ctx) => ctx.waitForSignal('paid', { timeoutMs: -1 }),
  noChoices: (ctx) => ctx.waitForDecision('ship', { choices: [] }),
  spawnBadPayload: (ctx) => ctx.spawn('kid', Child, { n: 'one' } as never),
  // `all` of none is [] at once (joinEmpty.test.ts); `any` of none can never succeed.
  joinNothing: (ctx) => ctx.join('kids', [], { mode: 'any' }),
  joinUnknown: (ctx) => ctx.join('kids', ['987654321']),
  joinOtherNamespace: (ctx) => ctx.join('kids', [elsewhereId]),
  joinSelf: (ctx) => ctx.join('kids', [ctx.job.id]),
  joinStranger: (ctx) => ctx.join('kids', [strangerId]),
  stepName: (ctx) => ctx.step('a\u0000b', () => 1),
  stepEmptyName: (ctx) => ctx.step('', () => 1),
  joinIdPastBigint: (ctx) => ctx.join('kids', ['9223372036854775808']),
  decisionLongPrompt: (ctx) => ctx.waitForDecision('ship', { choices: ['yes'], prompt: 'p'.repeat(4001) }),
  decisionTooManyChoices: (ctx) => ctx.waitForDecision('ship', { choices: Array.from({ length: 101 }, (_, i) => `c${i}`) }),
  txStepName: (ctx) => ctx.txStep('a\u0000b', async () => 1),
  // Not a refusal of workhorse's: the job's retry policy applies.
  ownError: async () => {
    throw new Error('flaky');
  },
};

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
/** A job of another namespace, which no join here may wait for. */
let elsewhereId: string;
/** A job of this namespace that no probe spawned (due in an hour). */
let strangerId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Probe, Child], poolMax: 6 });
  const elsewhere = createClient({ connectionString: db.url, namespace: 'elsewhere', jobs: [Child], poolMax: 1 });
  elsewhereId = (await elsewhere.enqueue(Child, { n: 1 })).id;
  await elsewhere.close();
  strangerId = (await client.enqueue(Probe, { call: 'ownError' }, { delayMs: 3_600_000 })).id;
  worker = new Worker(client, { workerId: 'refused', concurrency: 4, pollMs: 50 });
  worker.handle(Probe, async (p, ctx) => CALLS[p.call]!(ctx));
  worker.events.on('error', () => undefined);
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

describe('a wait refused for its arguments', () => {
  it('fails the job on its first attempt with the ValidationError; the handler\'s own error is retried', async () => {
    const ids = new Map<string, string>();
    for (const call of Object.keys(CALLS)) ids.set(call, (await client.enqueue(Probe, { call })).id);
    const messages = new Map<string, string>();
    const ended = async () => {
      const out: Record<string, { status: string; attempt: number; error: unknown }> = {};
      for (const [call, id] of ids) {
        const j = (await client.getJob(id))!;
        out[call] = { status: j.status, attempt: j.attempt, error: (j.lastError as { name?: unknown } | null)?.name };
        messages.set(call, String((j.lastError as { message?: unknown } | null)?.message));
      }
      return out;
    };
    const got = await waitFor(ended, (all) => Object.values(all).every((j) => j.status === 'failed'), { timeoutMs: 30_000, what: 'every probe failed' });
    for (const call of Object.keys(CALLS)) {
      if (call === 'ownError') expect(got[call], call).toEqual({ status: 'failed', attempt: 3, error: 'Error' });
      else expect(got[call], call).toEqual({ status: 'failed', attempt: 1, error: 'ValidationError' });
    }
    expect(messages.get('joinUnknown')).toMatch(/job 987654321 not found in namespace "default"/);
    expect(messages.get('joinOtherNamespace')).toMatch(new RegExp(`job ${elsewhereId} not found in namespace "default"`));
    expect(messages.get('joinSelf')).toMatch(/cannot join itself/);
    expect(messages.get('stepEmptyName')).toMatch(/must not be empty/);
    expect(messages.get('joinIdPastBigint')).toMatch(/children/);
    expect(messages.get('decisionLongPrompt')).toMatch(/prompt/);
    expect(messages.get('decisionTooManyChoices')).toMatch(/at most 100 choices/);
    // Nothing of the refused decisions was stored.
    expect((await db.pool.query("select count(*)::int as n from workhorse.job_waits where kind = 'decision'")).rows[0].n).toBe(0);
    expect(messages.get('joinStranger')).toMatch(new RegExp(`job ${strangerId} is not a child of job ${ids.get('joinStranger')}`));
    // Nothing was spawned for the refused child.
    expect((await db.pool.query("select count(*)::int as n from workhorse.jobs where type = 'refused.child' and namespace = 'default'")).rows[0].n).toBe(0);
  }, 60_000);
});
