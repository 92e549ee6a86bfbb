// The Lambda entry that migrates the database at deploy time. The CDK
// construct runs it as a trigger before the tick and HTTP functions are
// updated, so new code never meets an old schema. It applies the numbered
// files in sql/ (shipped beside the bundle) under the migration lock, so a
// concurrent `workhorse migrate` or a second stack is harmless. Nothing runs
// at module scope.
import { loadEnvConfig } from '../src/config.js';
import { migrate, type MigrateResult } from '../src/db/migrate.js';
import { ConfigError } from '../src/errors.js';

export async function handler(): Promise<MigrateResult> {
  const env = loadEnvConfig();
  if (!env.databaseUrl) {
    throw new ConfigError('DATABASE_URL is not set: the migration function needs the database URL');
  }
  const result = await migrate({ connectionString: env.databaseUrl });
  console.log(JSON.stringify({ workhorse: 'migrate', applied: result.applied, version: result.version }));
  return result;
}
