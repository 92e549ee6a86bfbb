// `workhorse demo`: the fleet demo on the embedded PostgreSQL (or on
// DATABASE_URL when it is set). With --ui it also serves the dashboard on
// the demo's namespace, prints its address and a sign-in token, paces the
// story so a person can follow it in the table, and keeps the dashboard up
// afterwards until Ctrl-C.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import * as z from 'zod';
import { migrate } from '../../db/migrate.js';
import { resolveDatabase } from '../../db/resolveDatabase.js';
import { startDemoDashboard, type DemoDashboard } from '../../demo/dashboard.js';
import { demoNamespace, runDemo } from '../../demo/scenario.js';
import { parseCommandLine } from '../args.js';
import { listenFailure } from '../listenFailure.js';
import type { Command, CliIo } from '../command.js';
import { UsageError } from '../usageError.js';
import { portFlag, wholeNumberFlag } from '../wholeNumberFlag.js';

/** The pause after each step with --ui, unless --pace-ms says otherwise. */
const UI_PACE_MS = 4000;

const flagsSchema = z
  .object({
    ui: z.boolean().default(false),
    port: portFlag().optional(),
    host: z.string().min(1).optional(),
    'pace-ms': wholeNumberFlag('milliseconds', 0, 999_999).optional(),
  })
  .strict();

function untilStopped(io: CliIo): Promise<void> {
  io.out('the story is over; the dashboard stays up until Ctrl-C');
  return new Promise((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}

export const demoCommand: Command = {
  name: 'demo',
  summary: 'three workers share six jobs: claim, heartbeat, kill, recovery, gate, rolling deploy (embedded PostgreSQL unless DATABASE_URL is set); --ui shows it in the dashboard',
  usage: 'workhorse demo [--ui [--port 8080] [--host 127.0.0.1] [--pace-ms 4000]]',
  help: [
    '--ui          serve the dashboard on the demo\'s namespace while the story runs, and after it until Ctrl-C',
    '--port N      the dashboard\'s port (default 8080; 0 picks a free one)',
    '--host H      the address it binds (default 127.0.0.1)',
    `--pace-ms N   pause after each step (default ${UI_PACE_MS} with --ui, 0 without)`,
    'set DATABASE_URL to run it on your own server',
  ],
  async run(argv, env, io) {
    const { flags } = parseCommandLine(
      argv,
      { options: { ui: { type: 'boolean' }, port: { type: 'string' }, host: { type: 'string' }, 'pace-ms': { type: 'string' } } },
      flagsSchema,
    );
    if (!flags.ui && (flags.port !== undefined || flags.host !== undefined)) throw new UsageError('--port and --host need --ui');
    const paceMs = flags['pace-ms'] ?? (flags.ui ? UI_PACE_MS : 0);
    const dataDir = env.dataDir ?? '.workhorse/pg';
    // The first run initialises the data directory, which takes a while: said then, not on every run.
    const first = !env.databaseUrl && !existsSync(join(dataDir, 'PG_VERSION'));
    io.out(env.databaseUrl ? 'using DATABASE_URL' : `starting the embedded PostgreSQL${first ? ` (first run: initialising ${dataDir})` : ` (${dataDir})`} …`);
    const db = await resolveDatabase(env);
    let dashboard: DemoDashboard | undefined;
    try {
      const namespace = demoNamespace();
      if (flags.ui) {
        await migrate({ connectionString: db.connectionString });
        const host = flags.host ?? '127.0.0.1';
        const port = flags.port ?? 8080;
        dashboard = await startDemoDashboard({ connectionString: db.connectionString, namespace, host, port }).catch((err: unknown) => {
          throw listenFailure(err, host, port);
        });
        io.out(`dashboard: ${dashboard.url}`);
        io.out(`sign in with the token: ${dashboard.token}`);
        if (paceMs > 0) {
          io.out(`the story starts in ${pauseText(paceMs)} and pauses ${pauseText(paceMs)} after each step`);
          await new Promise((r) => setTimeout(r, paceMs));
        }
      }
      // A paced story slows the workers too: a job must still be running when its worker is killed.
      const paced = paceMs > 0 ? { heartbeatMs: 1000, workMs: 3000 + 3 * paceMs } : {};
      await runDemo({ connectionString: db.connectionString, out: io.out, namespace, stepPauseMs: paceMs, ...paced });
      if (dashboard) await untilStopped(io);
    } finally {
      await dashboard?.close();
      await db.close();
    }
    return 0;
  },
};

/** A pause as the user gave it: milliseconds under a second, else seconds to a tenth (1500 is "1.5 s"). */
function pauseText(ms: number): string {
  return ms < 1000 ? `${ms} ms` : `${Number((ms / 1000).toFixed(1))} s`;
}
