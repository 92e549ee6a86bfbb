// What every benchmark phase gets: the server, the flags, and a way to make
// a fresh database for one system that is dropped when the phase ends.
import { createBenchDatabase, type BenchDatabase } from '../databases.js';
import type { BenchFlags, SystemName } from '../options.js';

export interface PhaseContext {
  serverUrl: string;
  flags: BenchFlags;
  log(line: string): void;
}

export async function withDatabase<T>(ctx: PhaseContext, system: SystemName, fn: (db: BenchDatabase) => Promise<T>): Promise<T> {
  const db = await createBenchDatabase(ctx.serverUrl, system, ctx.flags.keep);
  try {
    return await fn(db);
  } finally {
    await db.drop();
  }
}
