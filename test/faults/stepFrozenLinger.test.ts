// A plain step whose record meets a frozen connection, when the attempt is
// stopped (its lease runs out unreached): the step gives the handler its
// abort at once, while the network is still frozen, and the handler
// returns. It waited in workhorse's own call until that call's bound (the
// lease, 180 s by default), its slot taken; before that the line the worker
// logged said the handler "ignored ctx.signal".
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
  it('rejects with the abort once its attempt is stopped: the handler returns while the network is still frozen', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    let entered = 0;
    let frozen = false;
    let endedFrozen: boolean | undefined;
    let stepError: unknown;
    const worker = new Worker(client, { heartbeatMs: 500, pollMs: 100, listen: false, concurrency: 1 });
    worker.handle(Frozen, async (_payload, ctx) => {
      try {
        await ctx.step('write', () => {
          entered++;
          // Frozen from inside the first attempt's step body, so its record surely meets the freeze.
          if (entered === 1) {
            proxy.freeze();
            frozen = true;
          }
          return entered;
        });
      } catch (err) {
        stepError = err;
        throw err;
      } finally {
        endedFrozen ??= frozen;
      }
    });
    await direct.enqueue(Frozen, {});
    const run = worker.run();
    try {
      await waitFor(() => entered, (n) => n > 0, { what: 'the step body to run' });
      // The lease (2 s) runs out unreached; the handler returns without waiting for the thaw.
      await waitFor(() => endedFrozen, (v) => v !== undefined, { what: 'the handler to return', timeoutMs: 15_000 }).catch(() => undefined);
      expect(endedFrozen).toBe(true);
      expect(stepError).toBeInstanceOf(Error);
      expect(lines.filter((l) => l.includes('ignored ctx.signal') || l.includes('but its handler is still running'))).toEqual([]);
    } finally {
      frozen = false;
      proxy.resume();
      spy.mockRestore();
      await worker.stop();
      await run;
    }
  }, 90_000);
});
