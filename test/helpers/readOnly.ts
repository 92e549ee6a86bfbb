// A test database made read-only (or writable again) the way a failover or
// default_transaction_read_only makes one: the setting on the database, and
// its sessions ended, so every new session gets the setting. Only the test's
// own database is touched, never the shared server.
import { onServer } from '../../certify/run.js';
import { serverUrl, type TestDatabase } from './db.js';

export async function setReadOnly(db: TestDatabase, on: boolean): Promise<void> {
  const server = serverUrl();
  await onServer(server, on ? `alter database ${db.name} set default_transaction_read_only = on` : `alter database ${db.name} reset default_transaction_read_only`);
  await onServer(server, `select pg_terminate_backend(pid) from pg_stat_activity where datname = '${db.name}' and pid <> pg_backend_pid()`);
}

/** For afterAll: the database writable again (so it can be dropped), whatever the test left. */
export async function resetReadOnly(db: TestDatabase | undefined): Promise<void> {
  if (db) await onServer(serverUrl(), `alter database ${db.name} reset default_transaction_read_only`).catch(() => undefined);
}
