// A database outage seen by the whole fleet opens no dead_worker alert. After
// it, every worker looks silent until its next beat: the first sys.alerts
// evaluation opened an alert for each live worker that had not beaten yet,
// and resolved it a second later (10 outbox events for one 12 s fault with
// 1 s heartbeats). An evaluator now counts no silence from before it could
// see the database again. A worker that really stays silent still opens
// one. Two TCP proxies in front of the test database: the evaluator's and
// another worker's; the other worker is cut off 3 s longer than the
// evaluator, so its silence outlasts the outage by less than its threshold.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Noop = defineJob({ type: 'outage.noop', queue: 'outage', schema: z.object({}) });
/** The other worker's threshold: (7 + 0.5) heartbeats of 600 ms, 4.5 s. */
const RULES = { backlog: false, oldest_ready: false, failure_rate: false, dead_worker: { missedHeartbeats: 7 }, unhandled_type: false, stuck_lease: false, slot_missed: false, held_xmin: false } as const;

let db: TestDatabase;
const proxies: TcpProxy[] = [];
const clients: Client[] = [];

async function proxiedClient(): Promise<{ client: Client; proxy: TcpProxy }> {
  const u = new URL(db.url);
  const proxy = new TcpProxy(u.hostname, Number(u.port || 5432));
  u.port = String(await proxy.start());
  proxies.push(proxy);
  const client = createClient({ connectionString: u.toString(), jobs: [Noop], poolMax: 4, callTimeoutMs: 2_000 });
  clients.push(client);
  return { client, proxy };
}

function cut(proxy: TcpProxy, on: boolean): void {
  proxy.refuse(on);
  if (on) proxy.dropAll();
}

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  for (const c of clients) await c.close();
  for (const p of proxies) await p.close();
  await db?.drop();
});

describe('dead_worker after an outage the whole fleet saw', () => {
  it('opens no alert for a worker that beats again within its threshold of the outage; one that stays silent opens one', async () => {
    const e = await proxiedClient();
    const o = await proxiedClient();
    const evaluator = new Worker(e.client, { queue: 'outage', workerId: 'evaluator', heartbeatMs: 500, pollMs: 200, scheduleNamespaces: ['sys'], alerts: { everyMs: 1000, rules: RULES } });
    const other = new Worker(o.client, { queue: 'outage', workerId: 'other', heartbeatMs: 600, pollMs: 200, listen: false });
    for (const w of [evaluator, other]) {
      w.events.on('error', () => undefined);
      w.handle(Noop, async () => undefined);
    }
    const runs = [evaluator.run(), other.run()];
    try {
      const evaluated = async () => (await db.pool.query<{ n: number }>("select count(*)::int n from workhorse.jobs where type = 'sys.alerts' and status = 'succeeded'")).rows[0]!.n;
      await waitFor(evaluated, (n) => n >= 1, { what: 'a first evaluation', timeoutMs: 20_000 });
      cut(e.proxy, true);
      cut(o.proxy, true);
      await sleep(6_000);
      cut(e.proxy, false);
      const before = await evaluated();
      await sleep(3_000);
      cut(o.proxy, false);
      // Evaluations while the other worker was still silent, and after it beat again.
      await waitFor(evaluated, (n) => n >= before + 4, { what: 'four evaluations after the outage', timeoutMs: 30_000 });
      const alerts = await db.pool.query("select key, state from workhorse.alerts where rule = 'dead_worker'");
      expect(alerts.rows).toEqual([]);

      // A worker that stays silent past its threshold is still found dead.
      cut(o.proxy, true);
      await waitFor(
        async () => (await db.pool.query<{ key: string }>("select key from workhorse.alerts where rule = 'dead_worker' and state = 'open'")).rows.map((r) => r.key),
        (keys) => keys.includes('other'),
        { what: 'the silent worker to be found dead', timeoutMs: 30_000 },
      );
      cut(o.proxy, false);
    } finally {
      for (const p of proxies) p.refuse(false);
      await Promise.all([evaluator.stop({ hard: true }), other.stop({ hard: true })]);
      await Promise.all(runs);
    }
  }, 90_000);
});
