// The built-in sys.retention and sys.alerts handlers and the Schedules API
// sent their statements on the bare pool, unbounded. On a connection
// stranded by a server that vanished without a reset (a failed host behind
// a name that now leads to a live one) such a call never ended and kept its
// pool connection for good: a worker's system slot stayed busy until its
// lease was lost, and the connection was never given back. They now run as
// the client's own calls do, each bounded by callTimeoutMs, failing with
// DatabaseUnavailableError and destroying the stranded connection.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { evaluateAlerts } from '../../src/alerts/alertsSlot.js';
import { createClient, DatabaseUnavailableError, Schedules, type Client } from '../../src/index.js';
import { runRetention } from '../../src/schedules/retention.js';

let cluster: OwnCluster;
let proxy: TcpProxy;
let proxyPort: number;

beforeAll(async () => {
  cluster = await startOwnCluster();
  proxy = new TcpProxy('127.0.0.1', cluster.port);
  proxyPort = await proxy.start();
  const setup = createClient({ connectionString: cluster.url() });
  await setup.migrate();
  await setup.close();
}, 60_000);

afterAll(async () => {
  await proxy?.close();
  await cluster?.destroy();
});

/** What `p` came to within `ms`: 'ok', the error, or 'still waiting'. */
async function within(p: Promise<unknown>, ms: number): Promise<unknown> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise((r) => (timer = setTimeout(() => r('still waiting'), ms)));
  try {
    return await Promise.race([p.then(() => 'ok', (err: unknown) => err), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** A client through the proxy whose one pooled connection is idle, then stranded. */
async function strandedClient(): Promise<Client> {
  const client = createClient({ connectionString: `postgres://postgres@127.0.0.1:${proxyPort}/postgres`, poolMax: 1, callTimeoutMs: 500 });
  await client.pool.query('select 1');
  proxy.strandOpen();
  return client;
}

const calls: [string, (c: Client) => Promise<unknown>][] = [
  ['sys.retention', (c) => runRetention(c, { olderThanMs: 60_000 })],
  ['sys.alerts', (c) => evaluateAlerts(c, {})],
  ['Schedules.list', (c) => new Schedules(c).list()],
];

describe('system calls on a stranded connection', () => {
  for (const [name, call] of calls) {
    it(`${name} fails within callTimeoutMs with DatabaseUnavailableError, and the next call goes through`, async () => {
      const client = await strandedClient();
      try {
        expect(await within(call(client), 5_000)).toBeInstanceOf(DatabaseUnavailableError);
        expect(await within(call(client), 5_000)).toBe('ok');
      } finally {
        await within(client.close(), 2_000);
      }
    }, 30_000);
  }
});

