// `workhorse migrate`: applies the schema to DATABASE_URL (or --database-url).
import * as z from 'zod';
import { databaseUrlSchema } from '../../config.js';
import { migrate } from '../../db/migrate.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';
import { UsageError } from '../usageError.js';
import { wholeNumberFlag } from '../wholeNumberFlag.js';

const flagsSchema = z.object({
  'database-url': databaseUrlSchema.optional(),
  'lock-timeout-ms': wholeNumberFlag('milliseconds', 0, 3_600_000).optional(),
});

export const migrateCommand: Command = {
  name: 'migrate',
  summary: 'apply the database schema (idempotent, safe to run from many processes)',
  usage: 'workhorse migrate [--database-url URL] [--lock-timeout-ms MS]',
  help: [
    '--database-url URL      the database to migrate (default: DATABASE_URL)',
    '--lock-timeout-ms MS    how long to keep trying while other sessions hold locks it needs (default 60000)',
  ],
  async run(argv, env, io) {
    const { flags } = parseCommandLine(argv, { options: { 'database-url': { type: 'string' }, 'lock-timeout-ms': { type: 'string' } } }, flagsSchema);
    const url = flags['database-url'] ?? env.databaseUrl;
    if (!url) throw new UsageError('set DATABASE_URL or pass --database-url');
    const r = await migrate({ connectionString: url, lockTimeoutMs: flags['lock-timeout-ms'] });
    // What PostgreSQL warned of (the runtime role missing, and how to create it) is the operator's to act on.
    for (const w of r.warnings) io.err(`warning: ${w}`);
    if (r.reinstalled.length) io.out(`reinstalled missing protocol functions: ${r.reinstalled.join(', ')}`);
    io.out(
      r.applied.length
        ? `applied migrations ${r.applied.join(', ')}; schema version ${r.version}`
        : r.reinstalled.length
          ? `schema version ${r.version}`
          : r.protocolUpdated
            ? `installed the changed protocol functions; schema version ${r.version}`
            : r.protocolRecorded
              ? `recorded the protocol files' checksum (the install did not record it, so they were installed once more, unchanged); schema version ${r.version}`
              : `schema is up to date (version ${r.version})`,
    );
    return 0;
  },
};
