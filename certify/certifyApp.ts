// The job the certification runs: S steps, the first S-1 plain `ctx.step`s
// whose bodies write a side effect row on their own (so a recorded step that
// ran again is visible), and a last transactional `ctx.txStep` whose row and
// checkpoint commit together (so a duplicate effect is visible). Short random
// pauses spread the work so kills land mid-job. In the durable mode a job
// also sleeps, waits for the signal `go` the harness sends it, and spawns
// one child job (a transactional step of its own) and joins it, between its
// plain steps and its transactional step.
import * as z from 'zod';
import { defineApp, type WorkhorseApp } from '../src/app/defineApp.js';
import { defineJob } from '../src/client/defineJob.js';
import { recordStepEffect, recordTxEffect } from './certifySql.js';

export const CERTIFY_TYPE = 'certify.steps';
export const CERTIFY_QUEUE = 'certify';
export const TX_STEP = 'tx';
export const CHILD_TYPE = 'certify.child';
export const GO_SIGNAL = 'go';

export const plainStepNames = (steps: number): string[] => Array.from({ length: steps - 1 }, (_, k) => `s${k + 1}`);

export const certifyJob = defineJob({
  type: CERTIFY_TYPE,
  queue: CERTIFY_QUEUE,
  schema: z
    .object({
      n: z.number().int().min(0),
      steps: z.number().int().min(2).max(100),
      /** The pause inside each step (default: random, under 2 ms); the fault tests slow jobs down with it. */
      pauseMs: z.number().int().min(0).max(60_000).optional(),
      /** Also sleep, wait for the harness's signal and spawn and join a child (the durable mode). */
      durable: z.boolean().optional(),
    })
    .strict(),
  // Kills may hit one job several times; no attempt budget should end it, and
  // a retried job should be claimable again at once.
  retry: { maxAttempts: 1000, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});

export const certifyChildJob = defineJob({
  type: CHILD_TYPE,
  queue: CERTIFY_QUEUE,
  schema: z.object({ n: z.number().int().min(0) }).strict(),
  retry: { maxAttempts: 1000, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } },
});

const pause = (ms?: number) => new Promise((r) => setTimeout(r, ms ?? Math.random() * 2));

export const certifyApp: WorkhorseApp = defineApp({
  jobs: [certifyJob, certifyChildJob],
  configure(worker) {
    const pool = worker.client.pool;
    worker.handle(certifyJob, async (payload, ctx) => {
      for (const name of plainStepNames(payload.steps)) {
        await ctx.step(name, async () => {
          await recordStepEffect(pool, ctx.job.id, name, ctx.job.execution);
          await pause(payload.pauseMs);
          return { name, execution: ctx.job.execution };
        });
      }
      if (payload.durable) {
        await ctx.sleep('nap', 10 + (payload.n % 40));
        await ctx.waitForSignal(GO_SIGNAL);
        const child = await ctx.spawn('child', certifyChildJob, { n: payload.n });
        await ctx.join('child', [child]);
      }
      return ctx.txStep(TX_STEP, async (tx) => {
        await recordTxEffect(tx, ctx.job.id, TX_STEP, ctx.job.execution);
        return { n: payload.n, execution: ctx.job.execution };
      });
    });
    worker.handle(certifyChildJob, async (payload, ctx) =>
      ctx.txStep(TX_STEP, async (tx) => {
        await recordTxEffect(tx, ctx.job.id, TX_STEP, ctx.job.execution);
        return { n: payload.n, execution: ctx.job.execution };
      }),
    );
  },
});
