// `workhorse queues`: list the queues with their counts and limits, pause
// one (no worker or tick claims from it; running jobs finish) or resume it,
// from a shell, as the HTTP API and the dashboard do.
import * as z from 'zod';
import { databaseUrlSchema } from '../../config.js';
import { queueNameSchema } from '../../names.js';
import { parseCommandLine } from '../args.js';
import { columns } from '../columns.js';
import type { Command } from '../command.js';
import { withOperatorClient } from '../operatorClient.js';
import { UsageError } from '../usageError.js';

const ACTIONS = ['list', 'pause', 'resume'] as const;

const flagsSchema = z.object({ 'database-url': databaseUrlSchema.optional(), json: z.boolean().default(false) });

export const queuesCommand: Command = {
  name: 'queues',
  summary: 'list queues, or pause or resume one (in WORKHORSE_NAMESPACE)',
  usage: 'workhorse queues list [--json] | pause <queue> | resume <queue>',
  help: [
    'list                 the queues with ready, running and waiting jobs, paused or not, and their limits; --json as GET /queues answers it',
    'pause <queue>        no worker or tick claims from it until it is resumed (running jobs finish)',
    'resume <queue>       claims from it again',
    '--database-url URL   the database (default: DATABASE_URL); the namespace is WORKHORSE_NAMESPACE (default "default")',
  ],
  async run(argv, env, io) {
    const { flags, positionals } = parseCommandLine(
      argv,
      { options: { 'database-url': { type: 'string' }, json: { type: 'boolean' } }, positionals: ['action', 'queue'], required: 1 },
      flagsSchema,
    );
    const [action, queue] = positionals;
    if (!ACTIONS.includes(action as (typeof ACTIONS)[number])) throw new UsageError(`unknown action "${action}": one of ${ACTIONS.join(', ')}`);
    if (action === 'list' && queue !== undefined) throw new UsageError('`queues list` takes no queue name');
    if (action !== 'list' && queue === undefined) throw new UsageError(`\`queues ${action}\` needs a queue name`);
    if (action !== 'list' && flags.json) throw new UsageError('--json applies to `queues list` only');
    if (queue !== undefined) {
      const name = queueNameSchema.safeParse(queue);
      if (!name.success) throw new UsageError(`"${queue}" is not a queue name: ${name.error.issues[0]!.message}`);
    }
    return withOperatorClient(flags['database-url'], env, async (client) => {
      if (action === 'pause' || action === 'resume') {
        await (action === 'pause' ? client.admin.pauseQueue(queue!) : client.admin.resumeQueue(queue!));
        io.out(`queue ${queue}: ${action === 'pause' ? 'paused' : 'resumed'}`);
        return 0;
      }
      const queues = await client.admin.listQueues();
      if (flags.json) {
        io.out(JSON.stringify({ queues }));
        return 0;
      }
      if (queues.length === 0) {
        io.out('no queues yet (a queue appears once a job is enqueued on it)');
        return 0;
      }
      const header = ['queue', 'state', 'ready', 'running', 'waiting', 'concurrency limit', 'rate limit'];
      const rows = queues.map((q) => [
        q.name,
        q.paused ? 'paused' : 'active',
        String(q.ready),
        String(q.running),
        String(q.waiting),
        q.concurrencyLimit === null ? '-' : String(q.concurrencyLimit),
        q.rateLimit === null ? '-' : `${q.rateLimit} per ${q.ratePeriodMs} ms`,
      ]);
      for (const line of columns([header, ...rows])) io.out(line);
      return 0;
    });
  },
};
