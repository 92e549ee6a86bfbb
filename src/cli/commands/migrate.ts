// `workhorse migrate`: applies the schema to DATABASE_URL (or --database-url).
import * as z from 'zod';
import { databaseUrlSchema } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';
import { UsageError } from '../usageError.js';

const flagsSchema = z.object({ 'database-url': databaseUrlSchema.optional() });

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply the database schema (idempotent, safe to run from many processes)',
  usage: 'workhorse migrate [--database-url URL]',
  help: ['--database-url URL   the database to migrate (default: DATABASE_URL)'],
  async run(argv, env, io) {
    const { flags } = parseCommandLine(argv, { options: { 'database-url': { type: 'string' } } }, flagsSchema);
    const url = flags['database-url'] ?? env.databaseUrl;
    if (!url) throw new UsageError('set DATABASE_URL or pass --database-url');
    const r = await migrate({ connectionString: url });
    io.out(r.applied.length ? `applied migrations ${r.applied.join(', ')}; schema version ${r.version}` : `schema is up to date (version ${r.version})`);
    return 0;
  },
};
