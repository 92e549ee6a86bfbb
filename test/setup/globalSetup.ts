// Gives every test file a PostgreSQL server: DATABASE_URL when set (CI, a
// local server), otherwise an embedded one started once for the whole run.
import type { TestProject } from 'vitest/node';
import { startEmbeddedPostgres, type EmbeddedPostgres } from '../../src/db/embedded.js';

let embedded: EmbeddedPostgres | undefined;

export default async function setup(project: TestProject) {
  let url = process.env.DATABASE_URL;
  if (!url) {
    embedded = await startEmbeddedPostgres({ dataDir: '.workhorse/test-pg' });
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
