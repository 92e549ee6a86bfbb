// `workhorse migrate`: applies the schema to DATABASE_URL (or --database-url).
import { z } from 'zod';
import { migrate } from '../../db/migrate.js';
import { parseFlags } from '../args.js';
import type { Command } from '../command.js';

const flagsSchema = z.object({ 'database-url': z.string().min(1).optional() });

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply the database schema (idempotent, safe to run from many processes)',
  usage: 'workhorse migrate [--database-url URL]',
  async run(argv, env, io) {
    const { flags } = parseFlags(argv, { 'database-url': { type: 'string' } }, flagsSchema, 'migrate');
    const url = flags['database-url'] ?? env.databaseUrl;
    if (!url) {
      io.err('workhorse migrate: set DATABASE_URL or pass --database-url');
      return 2;
    }
    const r = await migrate({ connectionString: url });
    io.out(r.applied.length ? `applied migrations ${r.applied.join(', ')}; schema version ${r.version}` : `schema is up to date (version ${r.version})`);
    return 0;
  },
};
