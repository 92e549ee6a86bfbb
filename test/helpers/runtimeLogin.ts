// A login in the workhorse_runtime role (migration 008) on the test server,
// for tests that must run as the runtime rather than as the owner: a random
// name, a password (the embedded server checks them with scram-sha-256; a
// trust server ignores it), optionally a connection limit, and the test
// database's URL signed in as it. drop() removes the role.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { serverUrl } from './db.js';

export interface RuntimeLogin {
  name: string;
  /** `databaseUrl` with this login's user name and password. */
  url: string;
  drop(): Promise<void>;
}

/** Runs `sql` as the test server's admin (role changes are server-wide, not the test database's). */
export async function asServerAdmin(sql: string): Promise<void> {
  const c = new pg.Client({ connectionString: serverUrl() });
  await c.connect();
  try {
    await c.query(sql);
  } finally {
    await c.end();
  }
}

export async function createRuntimeLogin(databaseUrl: string, o: { prefix?: string; connectionLimit?: number } = {}): Promise<RuntimeLogin> {
  const name = `${o.prefix ?? 'wh_rt'}_${randomBytes(4).toString('hex')}`;
  const password = randomBytes(12).toString('hex');
  const limit = o.connectionLimit === undefined ? '' : ` connection limit ${o.connectionLimit}`;
  await asServerAdmin(`create role ${name} login password '${password}'${limit} in role workhorse_runtime`);
  const u = new URL(databaseUrl);
  u.username = name;
  u.password = password;
  return { name, url: u.toString(), drop: () => asServerAdmin(`drop role if exists ${name}`) };
}
