// A worker that holds no lease logs a database outage's heartbeat failures
// once when it begins and once when it ends ("database reachable again"),
// as its schedule runner and outbox pump do: a failed beat risks nothing
// then. Its claims' failures are logged the same way (a line per try). It logged a line per beat, each saying "the leases held then have
// run out" of leases it did not hold (26 such lines in a 30 s outage at a
// 1 s heartbeat). Through a TCP proxy that refuses and resets every
// connection to the test server for the outage.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, defineJob, Worker } from '../../src/index.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Job = defineJob({ type: 'idle.outage', queue: 'idle', schema: z.object({}) });

let proxy: TcpProxy;
let url: string;
let proxied: ProxiedDatabase;
beforeAll(async () => {
  proxied = await createProxiedDatabase();
  ({ proxy, url } = proxied);
});
afterAll(async () => {
  await proxied?.close();
});

describe('an idle worker through a database outage', () => {
  it('logs its heartbeat and claim failures once when the outage begins and once when it ends', async () => {
    const lines: string[] = [];
    const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(' ')));
    const client = createClient({ connectionString: url, jobs: [Job], poolMax: 4 });
    const worker = new Worker(client, { queue: 'idle', heartbeatMs: 100, listen: false, pollMs: 100 });
    worker.handle(Job, async () => undefined);
    const running = worker.run();
    try {
      await waitFor(() => worker.runtimeState().registered, Boolean, { what: 'the worker to register' });
      proxy.refuse(true);
      proxy.dropAll();
      await sleep(1_500); // about 15 beats
      proxy.refuse(false);
      await waitFor(() => lines.filter((l) => l.includes('heartbeat: database reachable again')).length, (n) => n === 1, {
        what: 'the line saying the outage ended',
        timeoutMs: 10_000,
      });
      const beats = lines.filter((l) => /heartbeat/.test(l));
      expect(beats, lines.join('\n')).toHaveLength(2);
      expect(beats[0]).toMatch(/^\[workhorse\] worker \S+: heartbeat: database fault; retrying with backoff, logged again when it is over: /);
      expect(beats[1]).toMatch(/^\[workhorse\] worker \S+: heartbeat: database reachable again after \d+\.\d s \(\d+ failed tries\)$/);
      expect(lines.join('\n')).not.toContain('the leases held then have run out');
      // So do its claims: one line when their fault begins, one when a claim goes through again.
      await waitFor(() => lines.filter((l) => l.includes('claim: database reachable again')).length, (n) => n === 1, {
        what: "the line saying the claims' fault ended",
        timeoutMs: 10_000,
      });
      const claims = lines.filter((l) => /: claim[: ]/.test(l));
      expect(claims, lines.join('\n')).toHaveLength(2);
      expect(claims[0]).toMatch(/^\[workhorse\] worker \S+: claim: database fault; retrying with backoff, logged again when it is over: /);
    } finally {
      proxy.refuse(false);
      await worker.stop();
      await running;
      await client.close();
      spy.mockRestore();
    }
  }, 30_000);
});
