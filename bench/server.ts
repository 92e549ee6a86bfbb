// The server the benchmark runs on: DATABASE_URL when set, otherwise the
// embedded PostgreSQL started with durable settings (fsync,
// synchronous_commit and full_page_writes on). The suite and the demo keep
// the embedded server's fast, non-durable default; published figures must
// pay for commits the way a production server does.
import type { EnvConfig } from '../src/config.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';

export interface BenchServer {
  connectionString: string;
  /** Where the server came from, for the table's header. */
  source: 'DATABASE_URL' | 'embedded';
  close(): Promise<void>;
}

export async function openBenchServer(env: Pick<EnvConfig, 'databaseUrl' | 'dataDir'>): Promise<BenchServer> {
  if (env.databaseUrl) return { connectionString: env.databaseUrl, source: 'DATABASE_URL', close: async () => undefined };
  const server = await startEmbeddedPostgres({ dataDir: env.dataDir, durable: true });
  return { connectionString: server.connectionString, source: 'embedded', close: () => server.stop() };
}
