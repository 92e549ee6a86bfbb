// Names PostgreSQL cannot store as text (a NUL character, a lone UTF-16
// surrogate) are refused before anything is written, with a typed error
// whose issue path names the argument: in a handler (wait, spawn, join and
// step names, a signal wait's key, a decision's choices and prompt), on the
// client (signal names and keys, decisions, topics and outbox keys, dedupe
// and concurrency keys), in job definitions, handler types and worker
// options. PostgreSQL refuses a NUL; the driver would silently replace a
// lone surrogate, so a wait opened under a mangled name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ConfigError, ValidationError } from '../../src/errors.js';
import type { HandlerContext } from '../../src/worker/context.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const BAD = { nul: 'a\u0000b', surrogate: 'a\ud800b' } as const;
type Bad = keyof typeof BAD;

const Child = defineJob({ type: 'names.child', schema: z.object({}) });
const Probe = defineJob({ type: 'names.probe', schema: z.object({ call: z.string(), bad: z.enum(['nul', 'surrogate']) }) });

/** Each handler call made with a bad string, and the argument its error must name. */
const CALLS: Record<string, { path: (string | number)[]; run: (ctx: HandlerContext, s: string) => Promise<unknown> }> = {
  sleep: { path: ['name'], run: (ctx, s) => ctx.sleep(s, 10) },
  sleepUntil: { path: ['name'], run: (ctx, s) => ctx.sleepUntil(s, new Date(Date.now() + 60_000)) },
  waitForSignal: { path: ['name'], run: (ctx, s) => ctx.waitForSignal(s) },
  waitForSignalKey: { path: ['key'], run: (ctx, s) => ctx.waitForSignal('paid', { key: s }) },
  waitForDecision: { path: ['name'], run: (ctx, s) => ctx.waitForDecision(s, { choices: ['yes'] }) },
  decisionChoice: { path: ['choices', 1], run: (ctx, s) => ctx.waitForDecision('approve', { choices: ['yes', s] }) },
  decisionPrompt: { path: ['prompt'], run: (ctx, s) => ctx.waitForDecision('approve', { choices: ['yes'], prompt: s }) },
  spawn: { path: ['name'], run: (ctx, s) => ctx.spawn(s, Child, {}) },
  join: { path: ['name'], run: (ctx, s) => ctx.join(s, ['1']) },
  step: { path: ['name'], run: (ctx, s) => ctx.step(s, () => 1) },
  txStep: { path: ['name'], run: (ctx, s) => ctx.txStep(s, async () => 1) },
};

interface Seen {
  error: string;
  path: unknown;
  /** Whether the message names the argument and the problem ("name: must not contain ..."). */
  named?: boolean;
}

let db: TestDatabase;
let client: Client;
let worker: Worker;
let running: Promise<void>;
const seen = new Map<string, Seen>();

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Probe, Child], poolMax: 6 });
  worker = new Worker(client, { workerId: 'names', concurrency: 4, pollMs: 50 });
  worker.handle(Probe, async (p, ctx) => {
    try {
      await CALLS[p.call]!.run(ctx, BAD[p.bad as Bad]);
      seen.set(`${p.call}/${p.bad}`, { error: 'none', path: null });
    } catch (err) {
      const path = err instanceof ValidationError ? err.issues[0]?.path : null;
      const named = (err as Error).message.includes(`${CALLS[p.call]!.path.join('.')}: must not contain`);
      seen.set(`${p.call}/${p.bad}`, { error: (err as Error).constructor.name, path, named });
    }
    return 'checked';
  });
  running = worker.run();
});

afterAll(async () => {
  await worker?.stop();
  await running;
  await client?.close();
  await db?.drop();
});

async function count(table: string, where = 'true'): Promise<number> {
  return (await db.pool.query<{ n: number }>(`select count(*)::int as n from workhorse.${table} where ${where}`)).rows[0]!.n;
}

async function refusal(p: Promise<unknown> | (() => unknown)): Promise<ValidationError> {
  let err: unknown;
  try {
    await (typeof p === 'function' ? p() : p);
  } catch (e) {
    err = e;
  }
  expect(err).toBeInstanceOf(ValidationError);
  return err as ValidationError;
}

describe('names PostgreSQL cannot store', () => {
  it('are refused inside a handler with a ValidationError naming the argument, and nothing is written', async () => {
    const jobs = Object.keys(CALLS).flatMap((call) => (['nul', 'surrogate'] as const).map((bad) => ({ job: Probe, payload: { call, bad } })));
    await client.enqueueMany(jobs);
    await waitFor(() => seen.size, (n) => n === jobs.length, { what: 'every probe to run' });
    for (const [call, { path }] of Object.entries(CALLS)) {
      for (const bad of ['nul', 'surrogate']) expect({ call, bad, ...seen.get(`${call}/${bad}`) }).toEqual({ call, bad, error: 'ValidationError', path, named: true });
    }
    expect(await count('job_waits')).toBe(0);
    expect(await count('job_steps')).toBe(0);
    expect(await count('jobs', `type = '${Child.type}'`)).toBe(0);
  });

  it('are refused by the client calls that take names, naming the field', async () => {
    const { id } = await client.enqueue(Child, {}, { delayMs: 3_600_000 });
    const before = { jobs: await count('jobs'), events: await count('outbox_events'), signals: await count('job_signals') };
    for (const s of Object.values(BAD)) {
      expect((await refusal(client.signal(id, s))).message).toContain('signal name');
      expect((await refusal(client.signalKey(s, 'paid'))).message).toContain('signal key');
      expect((await refusal(client.signalKey('order-1', s))).message).toContain('signal name');
      expect((await refusal(client.decide(id, s, { choice: 'yes', by: 'ann' }))).message).toContain('decision name');
      expect((await refusal(client.decide(id, 'approve', { choice: s, by: 'ann' }))).issues[0]!.path).toEqual(['choice']);
      expect((await refusal(client.decide(id, 'approve', { choice: 'yes', by: s }))).issues[0]!.path).toEqual(['by']);
      expect((await refusal(client.publish(s, {}))).message).toContain('topic');
      expect((await refusal(client.publish('orders', {}, { key: s }))).issues[0]!.path).toEqual(['key']);
      expect((await refusal(client.enqueue(Child, {}, { dedupeKey: s }))).issues[0]!.path).toEqual(['dedupeKey']);
      expect((await refusal(client.enqueue(Child, {}, { concurrencyKey: s }))).issues[0]!.path).toEqual(['concurrencyKey']);
      expect((await refusal(client.enqueue(Child, {}, { queue: s }))).issues[0]!.path).toEqual(['queue']);
    }
    expect({ jobs: await count('jobs'), events: await count('outbox_events'), signals: await count('job_signals') }).toEqual(before);
  });

  it('are refused in job definitions, handler types and worker options', () => {
    for (const s of Object.values(BAD)) {
      expect(() => defineJob({ type: s, schema: z.object({}) })).toThrow(ConfigError);
      expect(() => defineJob({ type: 'names.q', queue: s, schema: z.object({}) })).toThrow(ConfigError);
      const w = new Worker(client, { workerId: 'names-types' });
      let err: unknown;
      try {
        w.handle(s, async () => undefined);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(ValidationError);
      expect((err as ValidationError).issues[0]!.path).toEqual(['type']);
      expect(w.types).toEqual([]);
      let config: unknown;
      try {
        new Worker(client, { build: s });
      } catch (e) {
        config = e;
      }
      expect(config).toBeInstanceOf(ConfigError);
      expect((config as ConfigError).issues[0]!.path).toEqual(['build']);
    }
  });
});
