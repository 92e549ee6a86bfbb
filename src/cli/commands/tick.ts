// `workhorse tick <app-module>`: runs one tick from a shell or a plain cron
// line on a VM, then exits. The tick's settings come from the environment
// (the same variables as the Lambda handler), flags override them; the
// summary is printed as one JSON line. The options are checked as runTick
// checks them before anything else, then the schema version, so an
// unmigrated database gets the same SchemaVersionError as the other
// commands.
import pg from 'pg';
import * as z from 'zod';
import { databaseUrlSchema, loadTickEnv } from '../../config.js';
import { GuardedDb } from '../../db/guardedDb.js';
import { assertSchemaVersion } from '../../db/schemaCheck.js';
import { ConfigError } from '../../errors.js';
import { queueNameSchema } from '../../names.js';
import { parseConfig } from '../../validation.js';
import { loadAppModule } from '../../tick/appModule.js';
import { tickOptionsSchema, type TickOptions } from '../../tick/options.js';
import { planTick } from '../../tick/plan.js';
import { runTick } from '../../tick/runTick.js';
import { skipHint } from '../../tick/skipHint.js';
import { parseCommandLine } from '../args.js';
import type { Command } from '../command.js';
import { unservedQueuesWarning } from '../unservedQueues.js';
import { UsageError } from '../usageError.js';
import { wholeNumberFlag } from '../wholeNumberFlag.js';
import { stopSignalsFor } from '../stopSignals.js';
import { loadUserModule, ModuleLoadError } from '../userModule.js';
import { EXIT_SECOND_SIGNAL } from '../../worker/process.js';

const ms = (min: number, max: number) => wholeNumberFlag('milliseconds', min, max);
const flagsSchema = z.object({
  'database-url': databaseUrlSchema.optional(),
  'budget-ms': ms(1000, 86_400_000).default(60_000),
  'heartbeat-ms': ms(50, 3_600_000).optional(),
  'safety-margin-ms': ms(0, 900_000).optional(),
  concurrency: wholeNumberFlag('jobs', 1, 1000).optional(),
  queue: z.array(queueNameSchema).optional(),
  'keep-polling': z.boolean().optional(),
  'skips-by-type': z.boolean().optional(),
});

/** How long the schema check may take to connect, and each of its queries (at most the tick's budget). */
const CHECK_CONNECT_TIMEOUT_MS = 10_000;
const CHECK_BOUND_SLACK_MS = 500;

async function checkSchema(connectionString: string, budgetMs: number): Promise<void> {
  // A server that never answers the startup, or a query waiting for a lock on workhorse.migrations,
  // must not hold the command past its budget.
  const boundMs = Math.min(CHECK_CONNECT_TIMEOUT_MS, budgetMs);
  const pool = new pg.Pool({ connectionString, max: 1, connectionTimeoutMillis: boundMs });
  pool.on('error', () => undefined);
  try {
    // A little past the pool's own connect timeout, so a server that never answers the startup still
    // fails as the pool says ("cannot reach the database: Connection terminated due to connection timeout").
    await assertSchemaVersion(new GuardedDb(pool, { timeoutMs: boundMs + CHECK_BOUND_SLACK_MS }));
  } finally {
    await pool.end();
  }
}

export const tickCommand: Command = {
  name: 'tick',
  summary: 'run one tick (recovery, due schedules, a bounded batch of jobs) within a time budget, print its summary',
  usage: 'workhorse tick <app-module.js> [--budget-ms 60000] [--database-url URL] [--heartbeat-ms N] [--safety-margin-ms N] [--concurrency N] [--queue Q ...] [--keep-polling] [--skips-by-type]',
  help: [
    '<app-module.js>          compiled module whose default export is defineApp(...) (default: WORKHORSE_APP)',
    '--budget-ms N            how long the tick may run, 1000-86400000 ms and more than the safety margin (default 60000)',
    '--database-url URL       the database (default: DATABASE_URL)',
    '--heartbeat-ms N         lease heartbeat of the tick worker (default 5000, or a quarter of a shorter budget)',
    '--safety-margin-ms N     time kept back before the budget ends (default 1000)',
    '--concurrency N          jobs run at once (default 10)',
    '--queue Q                a queue to claim from (repeatable; default: the app\'s queues)',
    '--keep-polling           keep claiming until the budget ends instead of stopping when the queues are empty',
    '--skips-by-type          count the jobs the tick skipped per job type, not only in total',
    'the tick\'s WORKHORSE_* variables apply too (flags win); docs/cli.md and docs/serverless.md list them',
  ],
  async run(argv, env, io) {
    // A signal before the tick runs (the module loading, the schema check) exits 0: nothing is claimed yet.
    const stop = stopSignalsFor('tick', io.err);
    // The budget counts from here: loading the app module and checking the schema are part of it.
    const startedAt = Date.now();
    try {
      const { flags, positionals } = parseCommandLine(
        argv,
        {
          options: {
            'database-url': { type: 'string' },
            'budget-ms': { type: 'string' },
            'heartbeat-ms': { type: 'string' },
            'safety-margin-ms': { type: 'string' },
            concurrency: { type: 'string' },
            queue: { type: 'string', multiple: true },
            'keep-polling': { type: 'boolean' },
            'skips-by-type': { type: 'boolean' },
          },
          positionals: ['app-module.js'],
        },
        flagsSchema,
      );
      const tickEnv = loadTickEnv();
      const file = positionals[0] ?? tickEnv.appModule;
      if (!file) throw new UsageError('give the path of a module whose default export is defineApp(...), or set WORKHORSE_APP');
      const connectionString = flags['database-url'] ?? env.databaseUrl;
      if (!connectionString) throw new UsageError('set DATABASE_URL or pass --database-url');
      const what = positionals[0] ? 'app module' : 'WORKHORSE_APP';
      const app = await loadedWithin(
        loadUserModule(file, what, (url) => loadAppModule(url, what, file)),
        startedAt + flags['budget-ms'] - Date.now(),
        () => new ModuleLoadError(file, new Error(`its loading took all of --budget-ms ${flags['budget-ms']}, so the tick did not run (a top-level await on something slow, or one that never settles)`)),
      );
      const options: TickOptions = {
        ...tickEnv.options,
        app,
        connectionString,
        namespace: env.namespace,
        deadline: new Date(startedAt + flags['budget-ms']),
        ...(flags['heartbeat-ms'] !== undefined ? { heartbeatMs: flags['heartbeat-ms'] } : {}),
        ...(flags['safety-margin-ms'] !== undefined ? { safetyMarginMs: flags['safety-margin-ms'] } : {}),
        ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
        ...(flags.queue ? { queues: flags.queue } : {}),
        ...(flags['keep-polling'] ? { untilEmpty: false } : {}),
        skipsByType: true,
        log: (line, err) => io.err(`${line} ${err instanceof Error ? err.message : String(err ?? '')}`),
      };
      // Checked as runTick checks them (the environment's WORKHORSE_MAX_FANOUT included, though a
      // shell tick never fans out), before the database and before any warning about the queues.
      // The flags' own timing is checked as of the command's start, so the answer does not depend on how long loading took.
      planTick(parseConfig(tickOptionsSchema, options, 'tick options'), startedAt);
      await checkSchema(connectionString, flags['budget-ms']);
      const unserved = unservedQueuesWarning(flags.queue ?? tickEnv.options.queues, app, tickEnv.options.scheduleNamespaces);
      if (unserved) io.err(`workhorse tick: ${unserved}`);
      // A shell tick never fans out to Lambda. Per-type skips feed the hint.
      // Once it runs, the first SIGTERM, SIGINT or SIGHUP stops it early
      // (running handlers finish, outcomes are written, it deregisters and
      // prints its summary); a second one exits at once with 130, leaving its
      // leases to recovery.
      stop.started((signal, nth) => {
        if (nth === 1) {
          io.err(`[workhorse] ${signal}: the tick stops claiming; running handlers finish (a second signal exits at once)`);
          return;
        }
        io.err(`[workhorse] ${signal} again: exiting ${EXIT_SECOND_SIGNAL}`);
        process.exit(EXIT_SECOND_SIGNAL);
      });
      const summary = await runTick({ ...options, maxFanout: 0, signal: stop.signal }).catch((err: unknown) => {
        throw startUpTookTheBudget(err, Date.now() - startedAt, flags['budget-ms']);
      });
      const { skippedByType: _byType, ...totals } = summary;
      io.out(JSON.stringify(flags['skips-by-type'] || tickEnv.options.skipsByType ? summary : totals));
      const hint = skipHint(summary);
      if (hint) io.err(`workhorse tick: ${hint}`);
      return 0;
    } finally {
      stop.release();
    }
  },
};

/**
 * The app module, unless its loading outlasts the budget: a top-level await
 * that waits on a timer or a connection kept the command running past its
 * budget for as long as it waited, for ever if it never settled. The import
 * cannot be cancelled; the command fails (exit 1), and the CLI ends the
 * process a second after it returns whatever the module still runs.
 */
function loadedWithin<T>(loading: Promise<T>, ms: number, late: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_, reject) => {
    // Unreferenced: a module with nothing left to run is found stalled at once (userModule.ts), not at the budget.
    timer = setTimeout(() => reject(late()), Math.max(0, ms)).unref();
  });
  return Promise.race([loading, expired]).finally(() => clearTimeout(timer));
}

/**
 * A tick refused for its timing once the command's start-up (the app
 * module's loading, the schema check) had used the budget past its safety
 * margin: said as such, since the flags alone were fine.
 */
function startUpTookTheBudget(err: unknown, tookMs: number, budgetMs: number): unknown {
  if (!(err instanceof ConfigError) || !err.message.startsWith('invalid tick timing: the tick has')) return err;
  return new ConfigError(
    `invalid tick timing: loading the app module and checking the schema took ${tookMs} ms of --budget-ms ${budgetMs}, leaving no more than the safety margin; give a larger --budget-ms (or lower --safety-margin-ms)`,
    err.issues,
    { cause: err },
  );
}
