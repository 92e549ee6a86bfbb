// `workhorse tick` whose database stops answering mid-tick (every byte
// stopped, sockets open: a hung server). The tick itself gave up at its
// budget, but the process lived on until a connection attempt still pending
// against the hung server reached its own connect timeout (a quarter of the
// budget, or 5 s): a 10 s tick exited after 12.9 s. The tick now destroys
// what is left of its pool at its deadline, and the process exits then.
import { beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/index.js';
import { SleepJob } from '../fixtures/tick-app.js';
import { cliEnv, startCli } from '../cli/support/runCli.js';
import { sleep } from '../helpers/wait.js';
import { useFaultCluster } from './harness.js';

const APP = 'test/fixtures/tick-app.ts';
const faultCluster = useFaultCluster();

beforeAll(async () => {
  const setup = createClient({ connectionString: faultCluster().cluster.url(), jobs: [SleepJob] });
  await setup.migrate();
  await setup.enqueueMany(Array.from({ length: 4 }, () => ({ job: SleepJob, payload: { ms: 1500 } })));
  await setup.close();
});

describe('workhorse tick against a database that hangs mid-tick', () => {
  it('exits at its budget, not after a pending connection attempt times out', async () => {
    const { proxy, proxyPort } = faultCluster();
    const url = `postgres://postgres@127.0.0.1:${proxyPort}/postgres`;
    const budgetMs = 8000;
    const child = startCli(['tick', APP, '--budget-ms', String(budgetMs), '--concurrency', '4'], cliEnv({ DATABASE_URL: url }));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    // The tick starts (its budget counts) once the CLI has compiled and checked the schema: its first connection.
    const waitFrom = Date.now();
    while (proxy.accepted < 1 && Date.now() - waitFrom < 30_000) await sleep(20);
    const tickStart = Date.now();
    // It claims and runs the 1.5 s jobs; then the server hangs.
    await sleep(1000);
    proxy.freeze();
    try {
      const code = await exited;
      expect(code).toBe(1);
      // Its budget, plus 1.2 s for the schema check before the budget starts and the process to end.
      expect(Date.now() - tickStart).toBeLessThan(budgetMs + 1200);
    } finally {
      proxy.resume();
    }
  }, 60_000);
});
