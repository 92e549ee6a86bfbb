// A handler that ignores its abort and outlives its tick: its next context
// call (a step) fails with what ended its attempt, the tick's deadline. It
// was a ClientClosedError whose message said "this client was closed
// (client.close())", a call the user never made; then one saying the tick
// ended its pool. A call through the client itself still says that.
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as z from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { ClientClosedError, createClient, defineJob, TickDeadlineError } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Job = defineJob({ type: 'outlives.tick', schema: z.object({}) });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
  const client = createClient({ connectionString: db.url, jobs: [Job] });
  await client.enqueue(Job, {});
  await client.close();
});

afterAll(async () => {
  await db?.drop();
});

it("a step after the tick returned fails with the tick's deadline, and a client call with the tick's ended pool, not client.close()", async () => {
  let tickReturned!: () => void;
  const returned = new Promise<void>((resolve) => (tickReturned = resolve));
  let stepError: Promise<unknown> | undefined;
  let callError: Promise<unknown> | undefined;
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  const app = defineApp({
    jobs: [Job],
    configure: (w) =>
      w.handle(Job, async (_p, ctx) => {
        started();
        // Ignores ctx.signal: runs on past the tick.
        stepError = returned.then(() => ctx.step('after', () => 1)).then(() => null, (e: unknown) => e);
        callError = returned.then(() => w.client.getJob(ctx.job.id)).then(() => null, (e: unknown) => e);
        await Promise.all([stepError, callError]);
      }),
  });
  const tick = runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 3000), safetyMarginMs: 1000, scheduleNamespaces: [] });
  await handlerStarted;
  await tick.then(
    () => undefined,
    () => undefined,
  );
  tickReturned();
  const err = await stepError!;
  expect(err).toBeInstanceOf(TickDeadlineError);
  const closed = await callError!;
  expect(closed).toBeInstanceOf(ClientClosedError);
  expect((closed as Error).message).toMatch(/^this client's connection pool was ended: .*a tick ends its pool when it returns/);
}, 20_000);
