// A fresh test database behind a TCP proxy (certify/tcpProxy.ts) that can
// reset, refuse or freeze every connection on command: the URL the code
// under test connects with goes through the proxy; `db.pool` does not.
import { TcpProxy } from '../../certify/tcpProxy.js';
import { createTestDatabase, type TestDatabase } from './db.js';

export interface ProxiedDatabase {
  db: TestDatabase;
  proxy: TcpProxy;
  /** The database's URL through the proxy. */
  url: string;
  /** Closes the proxy and drops the database. */
  close(): Promise<void>;
}

export async function createProxiedDatabase(): Promise<ProxiedDatabase> {
  const db = await createTestDatabase();
  const u = new URL(db.url);
  const proxy = new TcpProxy(u.hostname, Number(u.port || 5432));
  u.port = String(await proxy.start());
  return {
    db,
    proxy,
    url: u.toString(),
    async close() {
      await proxy.close();
      await db.drop();
    },
  };
}
