// The options of the standalone migrate(), checked before anything connects:
// a pool or a connection string (the pool wins), an sql/ directory that is
// workhorse's, and the lock budget. A plain JavaScript caller's `undefined`,
// `{}` or a number got a TypeError from deep inside pg, or a connection
// attempt with pg's environment defaults.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type pg from 'pg';
import * as z from 'zod';
import { ConfigError } from '../errors.js';
import { parseConfig } from '../validation.js';

const lockTimeoutSchema = z.number().int().min(0).max(3_600_000).optional();

/** Anything with pg.Pool's connect, query and end (a pool of another copy of pg is one too). */
const poolSchema = z.custom<pg.Pool>(
  (v) => typeof v === 'object' && v !== null && ['connect', 'query', 'end'].every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
  'must be a pg Pool',
);

const optionsSchema = z
  .object({
    pool: poolSchema.optional(),
    connectionString: z.string().trim().min(1, 'must not be empty').optional(),
    sqlDir: z
      .string()
      .min(1, 'must not be empty')
      .refine((dir) => existsSync(join(dir, 'ORDER')), "is not workhorse's sql/ directory (it has no ORDER file); leave it out to use the one shipped with the package")
      .optional(),
    lockTimeoutMs: z.unknown().optional(),
  })
  .strict()
  // Both given: the pool is used, as before (the connection string is ignored).
  .refine((o) => o.pool !== undefined || o.connectionString !== undefined, 'give either pool or connectionString');

export interface ParsedMigrateOptions {
  pool?: pg.Pool;
  connectionString?: string;
  sqlDir?: string;
  lockTimeoutMs: number;
}

export function parseMigrateOptions(options: unknown): ParsedMigrateOptions {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigError('invalid migrate options: expected an object such as { connectionString } or { pool }', [
      { path: [], message: 'expected an object' },
    ]);
  }
  const parsed = parseConfig(optionsSchema, options, 'migrate options');
  return { ...parsed, lockTimeoutMs: parseLockTimeout(parsed.lockTimeoutMs) };
}

function parseLockTimeout(value: unknown): number {
  const parsed = lockTimeoutSchema.safeParse(value);
  if (!parsed.success) {
    throw new ConfigError('migrate: lockTimeoutMs must be a whole number of milliseconds from 0 to 3,600,000', [
      { path: ['lockTimeoutMs'], message: parsed.error.issues[0]?.message ?? 'invalid' },
    ]);
  }
  return parsed.data ?? 60_000;
}
