// A plain step whose record meets a frozen connection, when the attempt is
// stopped (its lease runs out unreached): the handler waits in workhorse's
// own call until that call's bound, and the line the worker logs says so.
// It said the handler "ignored ctx.signal", sending an operator to look
// for a bug in a handler that did nothing wrong.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';
import { waitFor } from '../helpers/wait.js';

const Frozen = defineJob({ type: 'frozen.step', schema: z.object({}), retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 100, maxMs: 100 } } });

let proxied: ProxiedDatabase;
let proxy: TcpProxy;
let client: Client;
let direct: Client;

beforeAll(async () => {
  proxied = await createProxiedDatabase();
  proxy = proxied.proxy;
  client = createClient({ connectionString: proxied.url, jobs: [Frozen], poolMax: 4 });
  direct = createClient({ connectionString: proxied.db.url, jobs: [Frozen], poolMax: 2 });
});

afterAll(async () => {
  proxy?.resume();
  await client?.close();
  await direct?.close();
  await proxied?.close();
});

describe('a plain step whose record meets a frozen connection', () => {
  it('is said to wait on its context call, not to ignore ctx.signal, once its attempt is stopped', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    let entered = 0;
    const worker = new Worker(client, { heartbeatMs: 500, pollMs: 100, listen: false, concurrency: 1 });
    worker.handle(Frozen, async (_payload, ctx) => {
      await ctx.step('write', () => {
        entered++;
        // Frozen from inside the first attempt's step body, so its record surely meets the freeze.
        if (entered === 1) proxy.freeze();
        return entered;
      });
    });
    await direct.enqueue(Frozen, {});
    const run = worker.run();
    try {
      await waitFor(() => entered, (n) => n > 0, { what: 'the step body to run' });
      // The lease (2 s) runs out unreached; the handler still waits in the record's call.
      const line = await waitFor(
        () => lines.find((l) => l.includes('but its handler is still running')),
        (l) => l !== undefined,
        { what: 'the lingering line', timeoutMs: 15_000 },
      );
      expect(line).toMatch(/it waits on a call of its context \(a step, progress, a wait or a spawn\) the database has not answered yet/);
      expect(line).not.toMatch(/ignored ctx\.signal/);
    } finally {
      proxy.resume();
      spy.mockRestore();
      await worker.stop();
      await run;
    }
  }, 90_000);
});
