// Gives a vitest run a PostgreSQL server: DATABASE_URL when set (CI, a local
// server), otherwise an embedded one started once for the whole run and
// stopped by the returned teardown. Shared by the suite's global setup and
// the fixture suite that checks the exit code.
import type { TestProject } from 'vitest/node';
import { loadEnvConfig } from '../../src/config.js';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';

export async function provideDatabase(project: TestProject, o: { dataDir: string }): Promise<() => Promise<void>> {
  let embedded: EmbeddedPostgres | undefined;
  let url = loadEnvConfig().databaseUrl;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: o.dataDir });
    url = embedded.connectionString;
  }
  project.provide('databaseUrl', url);
  return async () => {
    await embedded?.stop();
  };
}

declare module 'vitest' {
  export interface ProvidedContext {
    databaseUrl: string;
  }
}
