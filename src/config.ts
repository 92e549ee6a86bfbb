// Environment configuration, parsed once with zod. This is the only module
// that reads process.env; the CLI and the Lambda handlers call it at start
// and pass the result down.
import { z } from 'zod';
import { namespaceSchema } from './names.js';
import { parseConfig } from './validation.js';

const envSchema = z.object({
  DATABASE_URL: z.string().min(1).optional(),
  WORKHORSE_NAMESPACE: namespaceSchema.default('default'),
  WORKHORSE_DATA_DIR: z.string().min(1).optional(),
});

export interface EnvConfig {
  /** Unset means: use the embedded PostgreSQL. */
  databaseUrl: string | undefined;
  namespace: string;
  /** Where the embedded PostgreSQL keeps its files. */
  dataDir: string | undefined;
}

export function loadEnvConfig(env: Record<string, string | undefined> = process.env): EnvConfig {
  const e = parseConfig(envSchema, { ...env, DATABASE_URL: env.DATABASE_URL || undefined }, 'environment');
  return { databaseUrl: e.DATABASE_URL, namespace: e.WORKHORSE_NAMESPACE, dataDir: e.WORKHORSE_DATA_DIR };
}
