// A tick's `log` takes every line the tick has to say, a lost lease's
// included: "job 1 lost its lease" went straight to stderr while the
// tick's other lines went to `log`.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import * as z from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { createClient, defineJob } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';

const Job = defineJob({ type: 'stale.line', schema: z.object({}) });
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

it("sends a lost lease's line (a job cancelled while it runs) to the tick's log, not to stderr", async () => {
  const client = createClient({ connectionString: db.url, jobs: [Job] });
  const { id } = await client.enqueue(Job, {});
  let started = false;
  const app = defineApp({
    jobs: [Job],
    configure: (w) =>
      w.handle(Job, async (_p, ctx) => {
        started = true;
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
      }),
  });
  const lines: string[] = [];
  const stderr = vi.spyOn(console, 'error').mockImplementation(() => undefined);
  try {
    const tick = runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 10_000), heartbeatMs: 200, scheduleNamespaces: [], log: (l) => lines.push(l) });
    await waitFor(() => started, Boolean, { what: 'the handler to start' });
    await client.cancel(id);
    await tick;
    expect(lines.some((l) => l.includes(`job ${id} (stale.line) lost its lease`)), lines.join('\n')).toBe(true);
    expect(stderr.mock.calls.filter((c) => String(c[0]).includes('lost its lease'))).toEqual([]);
  } finally {
    stderr.mockRestore();
    await client.close();
  }
}, 30_000);
