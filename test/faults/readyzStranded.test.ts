// The readiness probe of a worker process against a database that stops
// answering. Its ping ran on the bare pool with only a race against a
// timer: the probe answered 503 in time, but the query stayed on its pooled
// connection until the server answered, if ever. A connection stranded by
// a peer that vanished without a reset (a failed host behind a name that
// now leads to a live one) so held a pool slot for good, one per probe,
// until the worker had none left and stopped running jobs; with a bare
// client (`client:` in the definition) the ping had no bound at all and
// /readyz did not answer while the server hung. The ping is now a bounded
// call whose connection is destroyed when it times out.
import { request } from 'node:http';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, createWorkhorseAdapter, defineJob } from '../../src/index.js';
import { runWorkerProcess, type RunningProcess } from '../../src/worker/process.js';
import { waitFor } from '../helpers/wait.js';

const Ping = defineJob({ type: 'fx.readyz', schema: z.object({ n: z.number().int() }) });

let cluster: OwnCluster;
let proxy: TcpProxy;
let proxyPort: number;

beforeAll(async () => {
  cluster = await startOwnCluster();
  proxy = new TcpProxy('127.0.0.1', cluster.port);
  proxyPort = await proxy.start();
  const setup = createClient({ connectionString: cluster.url(), jobs: [Ping] });
  await setup.migrate();
  await setup.close();
}, 60_000);

afterAll(async () => {
  cluster?.thaw();
  await proxy?.close();
  await cluster?.destroy();
});

/** GET a probe path: its status, or 'no answer' after `withinMs`. */
function probe(port: number, path: string, withinMs: number): Promise<number | 'no answer'> {
  return new Promise((resolve) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.setTimeout(withinMs, () => {
      req.destroy();
      resolve('no answer');
    });
    req.on('error', () => resolve('no answer'));
    req.end();
  });
}

async function stop(p: RunningProcess): Promise<void> {
  p.shutdown('test');
  await p.done;
}

describe('the readiness probe over a database that stops answering', () => {
  it('keeps no pool connection of a stranded ping: the worker goes on running jobs and /readyz is ready again', async () => {
    const url = `postgres://postgres@127.0.0.1:${proxyPort}/postgres`;
    const handled: number[] = [];
    const running = await runWorkerProcess(
      {
        adapter: () => createWorkhorseAdapter({ connectionString: url, jobs: [Ping], poolSize: 1 }),
        probes: { port: 0, host: '127.0.0.1', databaseTimeoutMs: 300 },
        workers: [
          {
            options: { heartbeatMs: 5_000, pollMs: 200, concurrency: 1 },
            configure: (w) => void w.handle(Ping, (p) => void handled.push(p.n)),
          },
        ],
      },
      { log: () => undefined },
    );
    const direct = createClient({ connectionString: cluster.url(), jobs: [Ping] });
    try {
      const port = running.probePort!;
      await waitFor(() => probe(port, '/readyz', 2_000), (s) => s === 200, { what: 'the worker to be ready' });
      proxy.strandOpen();
      // The pool's one idle connection is stranded: the probe says so in time.
      expect(await probe(port, '/readyz', 2_000)).toBe(503);
      // New connections reach the server: the worker runs a job enqueued now, and is ready again.
      await direct.enqueue(Ping, { n: 1 });
      await waitFor(() => handled.length, (n) => n === 1, { what: 'the job enqueued after the strand to run', timeoutMs: 15_000 });
      await waitFor(() => probe(port, '/readyz', 2_000), (s) => s === 200, { what: 'the worker to be ready again', timeoutMs: 10_000 });
    } finally {
      await direct.close();
      await stop(running);
    }
  }, 60_000);

  it('answers 503 within its bound with a bare client while the server hangs', async () => {
    const running = await runWorkerProcess(
      {
        client: () => createClient({ connectionString: cluster.url(), jobs: [Ping], poolMax: 2 }),
        probes: { port: 0, host: '127.0.0.1', databaseTimeoutMs: 300 },
        workers: [{ options: { heartbeatMs: 5_000, concurrency: 1 }, configure: (w) => void w.handle(Ping, () => undefined) }],
      },
      { log: () => undefined },
    );
    const port = running.probePort!;
    try {
      await waitFor(() => probe(port, '/readyz', 2_000), (s) => s === 200, { what: 'the worker to be ready' });
      cluster.freeze();
      const start = Date.now();
      expect(await probe(port, '/readyz', 3_000)).toBe(503);
      expect(Date.now() - start).toBeLessThan(2_500); // its bound is 300 ms; the probe itself gives up at 3 s
    } finally {
      cluster.thaw();
      await stop(running);
    }
  }, 60_000);
});
