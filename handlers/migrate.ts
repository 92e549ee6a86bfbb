// The Lambda entry that migrates the database at deploy time. The CDK
// construct runs it as a trigger before the tick and HTTP functions are
// updated, so new code never meets an old schema. It applies the numbered
// files in sql/ (shipped beside the bundle) under the migration lock, so a
// concurrent `workhorse migrate` or a second stack is harmless. It connects
// with the owner credential (DATABASE_URL, or DATABASE_URL_SECRET_ARN read
// from Secrets Manager at run time), never the runtime functions' one.
// Nothing runs at module scope.
import { loadEnvConfig, requireDatabaseUrl } from '../src/config.js';
import { migrate, type MigrateResult } from '../src/db/migrate.js';
import { lambdaEnvironment } from '../src/secrets/lambdaEnvironment.js';

export async function handler(): Promise<MigrateResult> {
  const { env: resolved } = await lambdaEnvironment().current();
  const env = loadEnvConfig(resolved);
  const result = await migrate({ connectionString: requireDatabaseUrl(env, 'the migration function (the owner credential)') });
  console.log(JSON.stringify({ workhorse: 'migrate', applied: result.applied, version: result.version }));
  return result;
}
