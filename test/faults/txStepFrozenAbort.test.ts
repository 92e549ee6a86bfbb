// A transactional step whose connection freezes while its body runs (the
// network stops answering; the socket stays open): when the attempt is
// stopped (here its lease runs out unreached), the step gives its
// connection up and the handler returns, freeing its slot. Its statements
// had no bound on the client's side, so the handler waited for the socket
// to thaw (15-29 s in an outside fault run), its slot taken, and the log
// blamed it for ignoring ctx.signal. Through a TCP proxy the step's body
// freezes (every connection) just before its statement.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Frozen = defineJob({ type: 'frozen.txstep', schema: z.object({}), retry: { maxAttempts: 3, backoff: { kind: 'fixed', baseMs: 100, maxMs: 100 } } });

let proxied: ProxiedDatabase;
let proxy: TcpProxy;
let client: Client;
let direct: Client;

beforeAll(async () => {
  proxied = await createProxiedDatabase();
  proxy = proxied.proxy;
  client = createClient({ connectionString: proxied.url, jobs: [Frozen], poolMax: 4, callTimeoutMs: 1_000 });
  direct = createClient({ connectionString: proxied.db.url, jobs: [Frozen], poolMax: 2 });
});

afterAll(async () => {
  proxy?.resume();
  await client?.close();
  await direct?.close();
  await proxied?.close();
});

describe('a transactional step on a connection that freezes', () => {
  it('gives the connection up when the attempt is stopped: the handler returns while the network is still frozen', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    let frozen = false;
    let entered = 0;
    let endedFrozen: boolean | undefined;
    let stepError: unknown;
    const worker = new Worker(client, { heartbeatMs: 500, pollMs: 100, listen: false, concurrency: 1 });
    worker.handle(Frozen, async (_payload, ctx) => {
      try {
        await ctx.txStep('write', async (tx) => {
          entered++;
          // Frozen from inside the first attempt's step, so its statement surely meets the freeze.
          if (entered === 1) {
            proxy.freeze();
            frozen = true;
          }
          await tx.query('select 1');
        });
      } catch (err) {
        stepError = err;
        throw err;
      } finally {
        endedFrozen ??= frozen;
      }
    });
    const { id } = await direct.enqueue(Frozen, {});
    const run = worker.run();
    try {
      await waitFor(() => entered, (n) => n > 0, { what: 'the step body to begin' });
      // The lease (2 s) runs out unreached; the handler must not wait for the thaw.
      await waitFor(() => endedFrozen, (v) => v !== undefined, { what: 'the handler to return', timeoutMs: 8_000 }).catch(() => undefined);
      frozen = false;
      proxy.resume();
      expect(endedFrozen).toBe(true);
      expect(stepError).toBeInstanceOf(Error);
      expect(lines.filter((l) => l.includes('ignored ctx.signal'))).toEqual([]);
      // Afterwards the job runs again and succeeds.
      const row = await waitFor(
        async () => direct.getJob(id),
        (j) => j?.status === 'succeeded',
        { what: 'the job to succeed once the network thaws', timeoutMs: 30_000 },
      );
      expect(row?.status).toBe('succeeded');
    } finally {
      frozen = false;
      proxy.resume();
      spy.mockRestore();
      await worker.stop();
      await run;
    }
  }, 60_000);
});
