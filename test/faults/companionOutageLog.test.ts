// A worker firing the `sys` slots (with the outbox configured) and an app
// schedule every second, through a proxy that refuses every connection for
// 5 s (a stopped server), or on a database that is read-only for 5 s. Its companion's loops (the slot runner, the
// system worker on the `sys` queue, the outbox pump) retried on their own
// cadences and each failure was one line under one `schedules:` prefix:
// about 25 lines a second for the whole outage, and an outbox failure could
// not be told from a schedule one. Each component now backs off and logs
// one line when its fault begins, naming itself, and one when the database
// answers again; afterwards the schedule fires and an event is delivered.
// The worker's own loops (claims, heartbeat while it holds no lease, the
// registry refresh, the wake listener) log the same way.
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { createClient, defineJob, defineSchedule, Worker, type Client } from '../../src/index.js';
import type { Sink } from '../../src/outbox/sink.js';
import pg from 'pg';
import { createTestDatabase, serverUrl, type TestDatabase } from '../helpers/db.js';
import { sleep, waitFor } from '../helpers/wait.js';

const Beat = defineJob({ type: 'outage.beat', queue: 'outage', schema: z.object({}) });

let db: TestDatabase;
let proxy: TcpProxy;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  const u = new URL(db.url);
  proxy = new TcpProxy(u.hostname, Number(u.port || 5432));
  const port = await proxy.start();
  u.host = `127.0.0.1:${port}`;
  client = createClient({ connectionString: u.toString(), jobs: [Beat], poolMax: 6 });
});
afterAll(async () => {
  await client?.close();
  await proxy?.close();
  await db?.drop();
});

/** The component a companion line names (`[workhorse] worker <id>: <component>...`), or undefined for the worker's own loops. */
function componentOf(line: string, workerId: string): string | undefined {
  const rest = line.slice(line.indexOf(`worker ${workerId}`) + `worker ${workerId}`.length);
  const m = /^:?\s*(schedules|outbox|system worker)\b/.exec(rest);
  return m?.[1];
}

/** Runs `sql` on the server (not through the proxy), then ends every session of the test database but this one. */
async function onServer(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl() });
  await c.connect();
  try {
    await c.query(sql);
    await c.query('select pg_terminate_backend(pid) from pg_stat_activity where datname = $1 and pid <> pg_backend_pid()', [db.name]);
  } finally {
    await c.end();
  }
}

const outages = {
  /** A stopped server: every connection is reset, new ones at once. */
  refused: {
    begin: async () => {
      proxy.refuse(true);
      proxy.dropAll();
    },
    end: async () => proxy.refuse(false),
  },
  /** A server that refuses writes (a standby after a switchover): every session begun now is read-only. */
  'read-only': {
    begin: () => onServer(`alter database ${db.name} set default_transaction_read_only = on`),
    end: () => onServer(`alter database ${db.name} reset default_transaction_read_only`),
  },
};

it.each(Object.keys(outages) as (keyof typeof outages)[])('logs a bounded number of lines per companion component for a 5 s %s outage, and every component works again after it', async (kind) => {
  const outage = outages[kind];
  const workerId = `outage-${kind}`;
  const delivered: string[] = [];
  const sink: Sink = { name: 'memory', deliver: async (e) => void delivered.push(e.id) };
  const lines: string[] = [];
  const spy = vi.spyOn(console, 'error').mockImplementation((...args: unknown[]) => {
    lines.push(args.map((a) => (a instanceof Error ? `${a.name}: ${a.message}` : String(a))).join(' '));
  });
  let fired = 0;
  const worker = new Worker(client, {
    queue: 'outage',
    workerId,
    pollMs: 200,
    heartbeatMs: 1000,
    registryIntervalMs: 500,
    scheduleNamespaces: ['sys', 'outage'],
    schedules: [defineSchedule({ name: 'outage.every-second', scheduleNamespace: 'outage', job: Beat, payload: {}, everyMs: 1000 })],
    outbox: { sinks: [sink], everyMs: 1000 },
  });
  worker.handle(Beat, async () => {
    fired++;
  });
  const running = worker.run();
  try {
    await waitFor(() => fired, (n) => n > 0, { what: 'the schedule to fire before the outage' });
    const first = await client.publish('outage.before', { n: 1 });
    await waitFor(() => delivered.includes(first.id), Boolean, { what: 'an event delivered before the outage' });

    const from = lines.length;
    await outage.begin();
    await sleep(5000);
    const during = lines.slice(from);
    await outage.end();

    const firedBefore = fired;
    await waitFor(() => fired, (n) => n > firedBefore, { timeoutMs: 30_000, what: 'the schedule to fire after the outage' });
    const after = await client.publish('outage.after', { n: 2 });
    await waitFor(() => delivered.includes(after.id), Boolean, { timeoutMs: 30_000, what: 'an event delivered after the outage' });
    // The recovery lines (a component that next runs on a longer cadence, the registry refresh every 5 s,
    // says so when it does), and nothing left retrying.
    const recovered = (ls: string[]) =>
      [...new Set(ls.map((l) => componentOf(l, workerId)).filter((c) => c !== undefined))].every((c) =>
        ls.some((l) => componentOf(l, workerId) === c && l.includes('database reachable again')),
      );
    await waitFor(() => lines.slice(from), recovered, { timeoutMs: 30_000, what: 'every component that logged the fault to log its recovery' }).catch(
      () => undefined, // the assertions below say which did not
    );
    await sleep(1500);
    const all = lines.slice(from);

    const perComponent = new Map<string, number>();
    for (const line of all) {
      const c = componentOf(line, workerId);
      if (c !== undefined) perComponent.set(c, (perComponent.get(c) ?? 0) + 1);
    }
    const summary = JSON.stringify(Object.fromEntries(perComponent));
    // The outage was logged, component by component, and no component flooded.
    expect(during.filter((l) => componentOf(l, workerId) !== undefined).length, summary).toBeGreaterThan(0);
    for (const [c, n] of perComponent) expect(n, `${c}: ${summary}\n${all.join('\n')}`).toBeLessThanOrEqual(3);
    // The registry refresh (every 500 ms here) counts each failed try of the outage: it counted only the first.
    const refreshBack = all.find((l) => l.includes('registry refresh') && l.includes('reachable again'));
    expect(refreshBack, all.join('\n')).toMatch(/\((?:[2-9]|\d{2,}) failed tries\)/);
    // Each fault logged is logged over once the component works again.
    for (const c of perComponent.keys()) {
      expect(all.some((l) => componentOf(l, workerId) === c && l.includes('database reachable again')), `${c} never logged its recovery:\n${all.join('\n')}`).toBe(true);
    }
  } finally {
    await outage.end();
    await worker.stop();
    await running;
    spy.mockRestore();
  }
}, 90_000);
