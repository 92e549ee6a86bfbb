// invokeHandler's contract, which the executor relies on: `done` is called
// exactly once, never from inside the call (nor from inside an abort), with
// the handler's value or error; an abort ends the wait at once even when the
// handler ignores its signal; the job's timeout aborts it; a suspension wins
// over whatever the handler does afterwards; the span context is active
// while the handler runs and not in the callback.
import { context, createContextKey, ROOT_CONTEXT } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { defineJob } from '../../src/client/defineJob.js';
import type { ClaimedJob } from '../../src/db/protocol.js';
import { JobTimeoutError, ValidationError } from '../../src/errors.js';
import type { ContextDeps } from '../../src/worker/contextDeps.js';
import type { JobContext } from '../../src/worker/context.js';
import { invokeHandler, type Handler, type HandlerOutcome } from '../../src/worker/invokeHandler.js';
import { JobAbort } from '../../src/worker/jobAbort.js';
import { JobSuspension } from '../../src/worker/suspension.js';

const Def = defineJob({ type: 'ih.job', schema: z.object({ n: z.number() }) });
const deps = {} as ContextDeps; // no context method is called here

function jobOf(over: Partial<ClaimedJob> = {}): ClaimedJob {
  return { id: '7', type: 'ih.job', queue: 'default', attempt: 1, execution: 1, payload: { n: 2 }, timeoutMs: null, runAt: new Date(), ...over } as ClaimedJob;
}

/** Runs the handler; resolves with every outcome `done` got, once it has been called (and a little after, to catch a second call). */
function run(fn: Handler, opts: { job?: ClaimedJob; abort?: JobAbort; span?: typeof ROOT_CONTEXT } = {}) {
  const outcomes: HandlerOutcome[] = [];
  let sync = true;
  let calledSync = false;
  let first!: () => void;
  const called = new Promise<void>((r) => (first = r));
  invokeHandler(opts.job ?? jobOf(), { fn, def: Def }, opts.abort ?? new JobAbort(), deps, (o) => {
    if (sync) calledSync = true;
    outcomes.push(o);
    first();
  }, opts.span);
  sync = false;
  return {
    outcomes,
    settled: called.then(() => new Promise((r) => setTimeout(r, 20))).then(() => ({ outcomes, calledSync })),
  };
}

describe('invokeHandler', () => {
  it('hands over a sync value, a sync throw, an async value and an async rejection, each once and never synchronously', async () => {
    const boom = new Error('boom');
    const results = await Promise.all([
      run((p) => (p as { n: number }).n * 2).settled,
      run(() => {
        throw boom;
      }).settled,
      run(async (p) => (p as { n: number }).n + 1).settled,
      run(async () => Promise.reject(boom)).settled,
    ]);
    expect(results.map((r) => r.calledSync)).toEqual([false, false, false, false]);
    expect(results.map((r) => r.outcomes)).toEqual([[{ ok: true, value: 4 }], [{ ok: false, error: boom }], [{ ok: true, value: 3 }], [{ ok: false, error: boom }]]);
  });

  it('fails a stored payload that no longer matches the schema, without calling the handler', async () => {
    let ran = false;
    const { settled } = run(() => (ran = true), { job: jobOf({ payload: { n: 'x' } }) });
    const { outcomes } = await settled;
    expect(ran).toBe(false);
    expect(outcomes).toHaveLength(1);
    expect(outcomes[0]!.ok).toBe(false);
    expect((outcomes[0] as { error: unknown }).error).toBeInstanceOf(ValidationError);
  });

  it('ends the wait at an abort although the handler ignores its signal, and ignores its late value', async () => {
    const abort = new JobAbort();
    let release!: (v: string) => void;
    const r = run(() => new Promise<string>((res) => (release = res)), { abort });
    await new Promise((res) => setTimeout(res, 10));
    expect(r.outcomes).toEqual([]);
    const reason = new Error('lease lost');
    abort.abort(reason);
    expect(r.outcomes).toEqual([]); // not from inside abort()
    await new Promise((res) => setTimeout(res, 0));
    expect(r.outcomes).toEqual([{ ok: false, error: reason }]);
    release('late');
    expect((await r.settled).outcomes).toEqual([{ ok: false, error: reason }]);
  });

  it('does not run the handler of a job aborted before it starts', async () => {
    const abort = new JobAbort();
    const reason = new Error('stopped');
    abort.abort(reason);
    let ran = false;
    const { outcomes } = await run(() => (ran = true), { abort }).settled;
    expect(ran).toBe(false);
    expect(outcomes).toEqual([{ ok: false, error: reason }]);
  });

  it("aborts a handler that outlives the job's timeout with JobTimeoutError", async () => {
    const abort = new JobAbort();
    const t0 = Date.now();
    const { outcomes } = await run(() => new Promise(() => undefined), { abort, job: jobOf({ timeoutMs: 50 }) }).settled;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
    expect(outcomes).toHaveLength(1);
    expect((outcomes[0] as { error: unknown }).error).toBeInstanceOf(JobTimeoutError);
    expect(abort.aborted).toBe(true);
  });

  it('reports the suspension whatever the handler returns or throws after it', async () => {
    const suspend = (ctx: unknown) => ((ctx as JobContext).suspension = new JobSuspension('7', 'w'));
    const returned = await run(async (_p, ctx) => (suspend(ctx), 'ignored')).settled;
    const thrown = await run((_p, ctx) => {
      suspend(ctx);
      throw new Error('swallowed and replaced');
    }).settled;
    for (const r of [returned, thrown]) {
      expect(r.outcomes).toHaveLength(1);
      expect((r.outcomes[0] as { error: unknown }).error).toBeInstanceOf(JobSuspension);
    }
  });

  it('fails the job when a thenable throws from its then()', async () => {
    const err = new Error('bad thenable');
    const { outcomes } = await run(() => ({
      then() {
        throw err;
      },
    })).settled;
    expect(outcomes).toEqual([{ ok: false, error: err }]);
  });

  describe('with a context manager', () => {
    const key = createContextKey('ih.span');
    beforeAll(() => void context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable()));
    afterAll(() => context.disable());

    it('makes the span context active while the handler runs, through its awaits, and not in the callback', async () => {
      const span = ROOT_CONTEXT.setValue(key, 'job span');
      const seen: unknown[] = [];
      let inDone: unknown = 'unset';
      await new Promise<void>((resolve) =>
        invokeHandler(
          jobOf(),
          {
            def: Def,
            fn: async () => {
              seen.push(context.active().getValue(key));
              await new Promise((r) => setTimeout(r, 5));
              seen.push(context.active().getValue(key));
            },
          },
          new JobAbort(),
          deps,
          () => {
            inDone = context.active().getValue(key);
            resolve();
          },
          span,
        ),
      );
      expect(seen).toEqual(['job span', 'job span']);
      expect(inDone).toBeUndefined();
    });
  });
});
