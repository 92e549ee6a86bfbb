// A handler that ignores its abort at a tick's deadline is reported
// LINGER_GRACE_MS after the abort. The tick returned before that, so the
// line came after the invocation ended: on Lambda, in a later invocation's
// log or never. The tick now waits for it when its deadline leaves room.
// And a tick told to stop before it begins does nothing.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineApp, defineJob } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Stubborn = defineJob({ type: 'tick.stubborn', schema: z.object({}), retry: { maxAttempts: 2 } });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

it('logs the handler that ignored its abort before the tick returns', async () => {
  const client = createClient({ connectionString: db.url, jobs: [Stubborn] });
  const { id } = await client.enqueue(Stubborn, {});
  await client.close();
  const app = defineApp({ jobs: [Stubborn], configure: (w) => void w.handle(Stubborn, () => new Promise((r) => setTimeout(r, 4_000))) });
  const lines: string[] = [];
  const summary = await runTick({
    app,
    connectionString: db.url,
    deadline: new Date(Date.now() + 2_500),
    safetyMarginMs: 1_200,
    heartbeatMs: 300,
    scheduleNamespaces: [],
    log: (l, e) => lines.push(e === undefined ? l : `${l} ${e instanceof Error ? e.message : String(e)}`),
  });
  const atReturn = [...lines];
  expect(summary.claimed).toBe(1);
  expect(atReturn.filter((l) => l.includes(`job ${id} (tick.stubborn)`) && l.includes('ignored ctx.signal'))).toHaveLength(1);
});

it('does nothing when its stop signal is aborted before it begins: nothing registered, recovered or fired', async () => {
  const app = defineApp({ jobs: [Stubborn], configure: (w) => void w.handle(Stubborn, () => 'ok') });
  const ac = new AbortController();
  ac.abort();
  const before = (await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.schedules')).rows[0]!.n;
  const summary = await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 3_000), signal: ac.signal });
  expect(summary).toMatchObject({ claimed: 0, recovered: 0, slotsFired: 0 });
  expect((await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.worker_registry')).rows[0]!.n).toBe(0);
  expect((await db.pool.query<{ n: number }>('select count(*)::int n from workhorse.schedules')).rows[0]!.n).toBe(before);
});
