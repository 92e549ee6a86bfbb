// The durable calls' options and spawn's job argument are checked before
// anything is written. An unknown option key was ignored, so
// waitForSignal('paid', { timeout: 50 }) waited with no timeout at all; a
// schema that is not a zod schema, or a job that is no defineJob() value,
// failed later with a TypeError that was retried; a decision's choices could
// repeat one (a second, identical button); a signal key or wait name of "."
// or ".." (no URL path can carry it). Each is a ValidationError naming
// the option now, failing the job on its first attempt; so is a spawn of a
// job type name this build does not know (an UnknownJobTypeError).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, Worker, type Client, type HandlerContext } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Child = defineJob({ type: 'args.child', schema: z.object({}) });
const Probe = defineJob({
  type: 'args.probe',
  schema: z.object({ call: z.string() }),
  retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 1 } },
});

const CALLS: Record<string, [(ctx: HandlerContext) => Promise<unknown>, RegExp, string?]> = {
  signalTypo: [(ctx) => ctx.waitForSignal('paid', { timeout: 50 } as never), /invalid waitForSignal "paid": options: Unrecognized key: "timeout"/],
  signalSchema: [(ctx) => ctx.waitForSignal('paid', { schema: { parse: () => 1 } } as never), /options\.schema: schema must be a zod schema/],
  decisionTypo: [(ctx) => ctx.waitForDecision('ship', { choices: ['yes'], timeout: 50 } as never), /invalid waitForDecision "ship": options: Unrecognized key: "timeout"/],
  decisionTwice: [(ctx) => ctx.waitForDecision('ship', { choices: ['yes', 'no', 'yes'] }), /invalid waitForDecision "ship": choices: must not repeat a choice/],
  joinTypo: [
    async (ctx) => ctx.join('kids', [await ctx.spawn('kid', Child, {})], { Mode: 'any' } as never),
    /invalid join "kids": options: Unrecognized key: "Mode"/,
  ],
  spawnNotDefinition: [(ctx) => ctx.spawn('kid', { type: 'args.child' } as never, {} as never), /invalid spawn "kid": job: job must be a job type name or a defineJob\(\) definition/],
  spawnDetached: [(ctx) => ctx.spawn('kid', Child, {}, { detached: 'yes' } as never), /invalid spawn "kid": options\.detached: Invalid input: expected boolean/],
  // `all` of none is [] at once (joinEmpty.test.ts); `any` of none can never succeed.
  joinEmpty: [(ctx) => ctx.join('kids', [], { mode: 'any' }), /join "kids": children must be an array of spawned children or job ids \(mode 'any' needs at least one\)/],
  joinNumber: [(ctx) => ctx.join('kids', ['5', 123 as never]), /join "kids": children\.1: 123 is not a spawned child \(what spawn returned\) or a job id/],
  joinHuge: [(ctx) => ctx.join('kids', ['9223372036854775808']), /join "kids": children\.0: "9223372036854775808" is not a spawned child/],
  // A URL path cannot carry "." or "..": no HTTP call could signal such a wait.
  signalDotKey: [(ctx) => ctx.waitForSignal('paid', { key: '..' }), /invalid waitForSignal "paid": key: must not be "\." or "\.\."/],
  dotName: [(ctx) => ctx.waitForDecision('.', { choices: ['yes'] }), /name: must not be "\." or "\.\."/],
  // A type name this build does not know: every retry would be refused the same way (it was retried 25 times).
  spawnUnknown: [(ctx) => ctx.spawn('kid', 'args.nope' as never, {} as never), /unknown job type "args\.nope"/, 'UnknownJobTypeError'],
};

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Probe, Child], poolMax: 4 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('durable call arguments of the wrong shape', () => {
  it('fail the job on its first attempt with a ValidationError naming the option, and spawn nothing for them', async () => {
    const worker = new Worker(client, { concurrency: 7, pollMs: 50 }).handle(Probe, async ({ call }, ctx) => CALLS[call]![0](ctx));
    worker.events.on('error', () => undefined);
    const run = worker.run();
    const ids = new Map<string, string>();
    for (const call of Object.keys(CALLS)) ids.set(call, (await client.enqueue(Probe, { call })).id);
    const jobs = await waitFor(
      () => Promise.all([...ids.values()].map((id) => client.getJob(id))),
      (js) => js.every((j) => j!.status === 'failed'),
      { timeoutMs: 30_000, what: 'every probe to fail' },
    );
    await worker.stop();
    await run;
    [...ids.keys()].forEach((call, i) => {
      const j = jobs[i]!;
      expect([j.status, j.attempt, (j.lastError as { name: string }).name], call).toEqual(['failed', 1, CALLS[call]![2] ?? 'ValidationError']);
      expect((j.lastError as { message: string }).message, call).toMatch(CALLS[call]![1]);
    });
    // Only joinTypo's own child exists: the refused spawns wrote nothing.
    const kids = await db.pool.query<{ n: number }>("select count(*)::int as n from workhorse.jobs where type = 'args.child'");
    expect(kids.rows[0]!.n).toBe(1);
  }, 60_000);
});
