// `workhorse demo`: the fleet demo on the embedded PostgreSQL (or on
// DATABASE_URL when it is set).
import * as z from 'zod';
import { resolveDatabase } from '../../db/resolveDatabase.js';
import { runDemo } from '../../demo/scenario.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';

export const demoCommand: Command = {
  name: 'demo',
  summary: 'three workers share six jobs: claim, heartbeat, kill, recovery, gate, rolling deploy (embedded PostgreSQL unless DATABASE_URL is set)',
  usage: 'workhorse demo',
  help: ['(no options; set DATABASE_URL to run it on your own server)'],
  async run(argv, env, io) {
    parseCommandLine(argv, { options: {} }, z.object({}));
    io.out(env.databaseUrl ? 'using DATABASE_URL' : 'starting the embedded PostgreSQL (first run initialises .workhorse/pg) …');
    const db = await resolveDatabase(env);
    try {
      await runDemo({ connectionString: db.connectionString, out: io.out });
    } finally {
      await db.close();
    }
    return 0;
  },
};
