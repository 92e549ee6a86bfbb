// `workhorse serve` whose database connections freeze (a TCP proxy stops
// passing bytes both ways, sockets stay open: a network partition or a hung
// server). A request on a pooled connection used to wait forever; each query
// of the server's pool is now bounded (WORKHORSE_HTTP_QUERY_TIMEOUT_MS), so
// the request is a 503 `database_unreachable`, the frozen connection is
// destroyed, and once the network is back the server answers as before.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { TcpProxy } from '../../certify/tcpProxy.js';
import { migrate } from '../../src/db/migrate.js';
import { startServeProcess, type ServeProcess } from '../helpers/serveProcess.js';

const TOKEN = 'serve-frozen-token-0123456789abcdef';
let cluster: OwnCluster;
let proxy: TcpProxy;
let serve: ServeProcess;

async function get(path: string): Promise<{ status: number; ms: number; body: unknown }> {
  const start = Date.now();
  const r = await fetch(serve.baseUrl + path, { headers: { authorization: `Bearer ${TOKEN}` }, signal: AbortSignal.timeout(30_000) });
  return { status: r.status, body: await r.json(), ms: Date.now() - start };
}

beforeAll(async () => {
  cluster = await startOwnCluster();
  await migrate({ connectionString: cluster.url() });
  proxy = new TcpProxy('127.0.0.1', cluster.port);
  const proxyPort = await proxy.start();
  serve = await startServeProcess({
    DATABASE_URL: `postgres://postgres@127.0.0.1:${proxyPort}/postgres`,
    WORKHORSE_API_TOKEN: TOKEN,
    WORKHORSE_HTTP_QUERY_TIMEOUT_MS: '2000',
    WORKHORSE_HTTP_TICK_BUDGET_MS: '1000',
  });
}, 60_000);

afterAll(async () => {
  serve?.child.kill('SIGKILL');
  await proxy?.close();
  await cluster?.destroy();
});

describe('workhorse serve over frozen database connections', () => {
  it('answers 503 within the query bound instead of hanging, and serves again once the network is back', async () => {
    expect((await get('/jobs?limit=1')).status).toBe(200); // a pooled connection, idle now
    proxy.freeze();
    const frozen = await get('/jobs?limit=1');
    expect(frozen.status).toBe(503);
    expect(frozen.body).toEqual({ error: { code: 'database_unreachable', message: 'the database did not answer; retry shortly' } });
    expect(frozen.ms).toBeGreaterThanOrEqual(1900);
    expect(frozen.ms).toBeLessThan(5000);
    expect(serve.output()).toMatch(/GET \/jobs: the database did not answer: no answer from the database within 2000 ms \(a server that hangs .*\) \(database_unavailable\)/);
    proxy.resume();
    // Back within a few seconds: a request racing the resume may still meet a connection the freeze broke.
    let back = await get('/jobs?limit=1');
    for (const until = Date.now() + 5000; back.status !== 200 && Date.now() < until; ) {
      await new Promise((r) => setTimeout(r, 200));
      back = await get('/jobs?limit=1');
    }
    expect(back.status).toBe(200);
    expect(serve.child.exitCode).toBeNull();
  }, 40_000);
});
