// Picks the database for the demo and local commands: DATABASE_URL when set,
// the embedded PostgreSQL otherwise.
import { startEmbeddedPostgres } from './embedded.js';

export interface ResolvedDatabase {
  connectionString: string;
  embedded: boolean;
  close(): Promise<void>;
}

/** `databaseUrl` unset means: start the embedded PostgreSQL (its files under `dataDir`). */
export async function resolveDatabase(env: { databaseUrl?: string | undefined; dataDir?: string | undefined }): Promise<ResolvedDatabase> {
  if (env.databaseUrl) return { connectionString: env.databaseUrl, embedded: false, close: async () => undefined };
  const pg = await startEmbeddedPostgres({ dataDir: env.dataDir });
  return { connectionString: pg.connectionString, embedded: true, close: () => pg.stop() };
}
