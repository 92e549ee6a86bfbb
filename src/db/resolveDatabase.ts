// Picks the database for the demo and local commands: DATABASE_URL when set,
// the embedded PostgreSQL otherwise.
import type { EnvConfig } from '../config.js';
import { startEmbeddedPostgres } from './embedded.js';

export interface ResolvedDatabase {
  connectionString: string;
  embedded: boolean;
  close(): Promise<void>;
}

export async function resolveDatabase(env: EnvConfig): Promise<ResolvedDatabase> {
  if (env.databaseUrl) return { connectionString: env.databaseUrl, embedded: false, close: async () => undefined };
  const pg = await startEmbeddedPostgres({ dataDir: env.dataDir });
  return { connectionString: pg.connectionString, embedded: true, close: () => pg.stop() };
}
