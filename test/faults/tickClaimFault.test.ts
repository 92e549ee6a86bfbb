// Database faults in the middle of a tick. (1) A tick whose claim's answer
// never comes (the connection held, then the tick gives up) charged an
// attempt to every job that claim leased: the claim marked them started, and
// no heartbeat was left to hand them back, so a job of maxAttempts 1 ended
// failed without running. A tick's claim now marks nothing started (a beat
// marks its handlers once they run), so recovery gives such an attempt back.
// (2) A claim refused mid-tick (a restart, a reset) stopped the tick hard at
// once: running handlers were aborted with a TickDeadlineError 9 s before the
// deadline and their outcomes given up. Claiming now ends there, the running
// handlers finish and their outcomes are written once the database answers,
// and the tick then fails with the fault. Through a TCP proxy.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TcpProxy } from '../../certify/tcpProxy.js';
import { Client } from '../../src/client/client.js';
import { DatabaseUnavailableError } from '../../src/errors.js';
import { runTick } from '../../src/tick/runTick.js';
import app, { SleepJob } from '../fixtures/tick-app.js';
import { createProxiedDatabase, type ProxiedDatabase } from '../helpers/proxiedDatabase.js';
import { sleep, waitFor } from '../helpers/wait.js';

let proxied: ProxiedDatabase;
let proxy: TcpProxy;
let direct: Client;

beforeAll(async () => {
  proxied = await createProxiedDatabase();
  proxy = proxied.proxy;
  direct = new Client({ connectionString: proxied.db.url, jobs: [SleepJob] });
});

afterAll(async () => {
  proxy?.holdAnswers(false);
  proxy?.refuse(false);
  await direct?.close();
  await proxied?.close();
});

const tick = (ms: number) =>
  runTick({ app, connectionString: proxied.url, deadline: new Date(Date.now() + ms), concurrency: 4, heartbeatMs: 500, log: () => undefined }).then(
    (summary) => summary,
    (err: unknown) => err,
  );

describe('a tick meeting a database fault', () => {
  it("whose claim's answer never comes: no attempt is counted for the jobs it leased", async () => {
    const { id } = await direct.enqueue(SleepJob, { ms: 10 }, { maxAttempts: 1 });
    proxy.holdAnswersOnceSent('claim_many_v1');
    const outcome = await tick(4_000);
    expect(outcome).toBeInstanceOf(DatabaseUnavailableError);
    proxy.holdAnswers(false);
    proxy.dropAll();
    // Its lease (2 s) runs out; a recovery pass returns the job.
    await sleep(2_500);
    await proxied.db.pool.query("select workhorse.recover_expired_v1('default', 100)");
    expect(await direct.getJob(id)).toMatchObject({ status: 'ready', attempt: 0 });
    const after = await runTick({ app, connectionString: proxied.db.url, deadline: new Date(Date.now() + 5_000), concurrency: 4, log: () => undefined });
    expect(after.succeeded).toBe(1);
    expect(await direct.getJob(id)).toMatchObject({ status: 'succeeded', attempt: 1 });
  }, 30_000);

  it('whose claim is refused while a handler runs: the handler finishes, its outcome is written, then the tick fails', async () => {
    await proxied.db.pool.query('truncate workhorse.jobs cascade');
    const { id } = await direct.enqueue(SleepJob, { ms: 1_500 }, { maxAttempts: 1 });
    const fault = (async () => {
      await sleep(700);
      proxy.refuse(true);
      proxy.dropAll();
      await sleep(2_000);
      proxy.refuse(false);
    })();
    const outcome = await tick(10_000);
    await fault;
    expect(outcome).toBeInstanceOf(DatabaseUnavailableError);
    const job = await waitFor(() => direct.getJob(id), (j) => j?.status !== 'ready', { what: 'the job to end' });
    expect(job).toMatchObject({ status: 'succeeded', attempt: 1 });
  }, 30_000);
});
