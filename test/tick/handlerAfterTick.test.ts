// A handler that ignores its abort and outlives its tick finds the tick's
// pool ended: its next database call is a ClientClosedError. The message
// said "this client was closed (client.close())", a call the user never
// made; it now says the pool was ended and that a tick ends its own.
import { afterAll, beforeAll, expect, it } from 'vitest';
import * as z from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { ClientClosedError, createClient, defineJob } from '../../src/index.js';
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

it("a step after the tick returned is a ClientClosedError saying the tick ended its pool, not that client.close() was called", async () => {
  let tickReturned!: () => void;
  const returned = new Promise<void>((resolve) => (tickReturned = resolve));
  let stepError: Promise<unknown> | undefined;
  let started!: () => void;
  const handlerStarted = new Promise<void>((resolve) => (started = resolve));
  const app = defineApp({
    jobs: [Job],
    configure: (w) =>
      w.handle(Job, async (_p, ctx) => {
        started();
        // Ignores ctx.signal: runs on past the tick.
        stepError = returned.then(() => ctx.step('after', () => 1)).then(() => null, (e: unknown) => e);
        await stepError;
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
  expect(err).toBeInstanceOf(ClientClosedError);
  expect((err as Error).message).toMatch(/^this client's connection pool was ended: .*a tick ends its pool when it returns/);
}, 20_000);
