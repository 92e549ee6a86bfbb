// `workhorse tick <app-module>`: runs one tick from a shell or a plain cron
// line on a VM, then exits. The tick's settings come from the environment
// (the same variables as the Lambda handler), flags override them; the
// summary is printed as one JSON line.
import { z } from 'zod';
import { loadTickEnv } from '../../config.js';
import { ValidationError } from '../../errors.js';
import { loadAppModule } from '../../tick/appModule.js';
import { runTick } from '../../tick/runTick.js';
import { skipHint } from '../../tick/skipHint.js';
import { parseFlags } from '../args.js';
import type { Command } from '../command.js';

const int = z.coerce.number().int();
const flagsSchema = z.object({
  'database-url': z.string().min(1).optional(),
  'budget-ms': int.min(1000).max(86_400_000).default(60_000),
  'heartbeat-ms': int.optional(),
  'safety-margin-ms': int.optional(),
  concurrency: int.optional(),
  queue: z.array(z.string()).optional(),
  'keep-polling': z.boolean().optional(),
  'skips-by-type': z.boolean().optional(),
});

export const tickCommand: Command = {
  name: 'tick',
  summary: 'run one tick (recovery, due schedules, a bounded batch of jobs) within a time budget, print its summary',
  usage: 'workhorse tick <app-module.js> [--budget-ms 60000] [--database-url URL] [--concurrency N] [--queue Q ...] [--keep-polling] [--skips-by-type]',
  async run(argv, env, io) {
    const { flags, positionals } = parseFlags(
      argv,
      {
        'database-url': { type: 'string' },
        'budget-ms': { type: 'string' },
        'heartbeat-ms': { type: 'string' },
        'safety-margin-ms': { type: 'string' },
        concurrency: { type: 'string' },
        queue: { type: 'string', multiple: true },
        'keep-polling': { type: 'boolean' },
        'skips-by-type': { type: 'boolean' },
      },
      flagsSchema,
      'tick',
    );
    const tickEnv = loadTickEnv();
    const file = positionals[0] ?? tickEnv.appModule;
    if (!file) throw new ValidationError('workhorse tick: give the path of a module whose default export is defineApp(...)');
    const connectionString = flags['database-url'] ?? env.databaseUrl;
    if (!connectionString) {
      io.err('workhorse tick: set DATABASE_URL or pass --database-url');
      return 2;
    }
    const app = await loadAppModule(file, 'app module');
    const summary = await runTick({
      ...tickEnv.options,
      app,
      connectionString,
      namespace: env.namespace,
      deadline: new Date(Date.now() + flags['budget-ms']),
      ...(flags['heartbeat-ms'] !== undefined ? { heartbeatMs: flags['heartbeat-ms'] } : {}),
      ...(flags['safety-margin-ms'] !== undefined ? { safetyMarginMs: flags['safety-margin-ms'] } : {}),
      ...(flags.concurrency !== undefined ? { concurrency: flags.concurrency } : {}),
      ...(flags.queue ? { queues: flags.queue } : {}),
      ...(flags['keep-polling'] ? { untilEmpty: false } : {}),
      // A shell tick never fans out to Lambda. Per-type skips feed the hint.
      maxFanout: 0,
      skipsByType: true,
      log: (line, err) => io.err(`${line} ${err instanceof Error ? err.message : String(err ?? '')}`),
    });
    const { skippedByType: _byType, ...totals } = summary;
    io.out(JSON.stringify(flags['skips-by-type'] || tickEnv.options.skipsByType ? summary : totals));
    const hint = skipHint(summary);
    if (hint) io.err(`workhorse tick: ${hint}`);
    return 0;
  },
};
