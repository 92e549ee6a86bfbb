// One fresh database per system and measurement on the benchmark's server,
// so no system sees another's rows or the previous phase's dead tuples.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { SystemName } from './options.js';
import { systemFor } from './systems/registry.js';

export interface BenchDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

async function admin<T>(serverUrl: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: serverUrl });
  await c.connect();
  try {
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Databases this process created and has not dropped yet (for cleanup on Ctrl-C). */
const live = new Set<string>();

/** Drops every benchmark database this process still has (best effort). */
export async function dropLiveDatabases(serverUrl: string): Promise<void> {
  for (const name of [...live]) {
    await admin(serverUrl, (c) => c.query(`drop database if exists ${name} with (force)`)).catch(() => undefined);
    live.delete(name);
  }
}

/** Creates an empty database, installs `system` in it and returns its URL. */
export async function createBenchDatabase(serverUrl: string, system: SystemName, keep: boolean): Promise<BenchDatabase> {
  const name = `wh_bench_${system}_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, (c) => c.query(`create database ${name}`));
  if (!keep) live.add(name);
  const url = withDatabase(serverUrl, name);
  await systemFor(system).install(url);
  return {
    url,
    name,
    drop: async () => {
      if (keep) return;
      await admin(serverUrl, (c) => c.query(`drop database if exists ${name} with (force)`));
      live.delete(name);
    },
  };
}
