// `workhorse jobs`: an operator's job actions from a shell, as the HTTP API
// and the dashboard offer them: list (filtered, newest first, a page at a
// time), show one, retry failed or cancelled ones, cancel ones not ended.
// Each action names its jobs by id; a job an action cannot take (not found,
// already succeeded) is one line on stderr, the others still go through,
// and the exit code is 1 when any was refused.
import * as z from 'zod';
import { databaseUrlSchema } from '../../config.js';
import { cancelledOrConflict } from '../../client/cancelRefusal.js';
import type { Client } from '../../client/client.js';
import { JOB_STATUSES, type JobRecord, type JobStatus } from '../../db/protocol.js';
import { NotFoundError, WorkhorseError } from '../../errors.js';
import { jobIdStringSchema, jobTypeSchema, queueNameSchema } from '../../names.js';
import { parseCommandLine } from '../args.js';
import { columns } from '../columns.js';
import type { CliIo, Command } from '../command.js';
import { withOperatorClient } from '../operatorClient.js';
import { UsageError } from '../usageError.js';
import { wholeNumberFlag } from '../wholeNumberFlag.js';
import { dueNever } from '../../db/protocol/waits.js';

const ACTIONS = ['list', 'show', 'retry', 'cancel'] as const;

const flagsSchema = z.object({
  'database-url': databaseUrlSchema.optional(),
  status: z.enum(JOB_STATUSES as [JobStatus, ...JobStatus[]]).optional(),
  queue: queueNameSchema.optional(),
  type: jobTypeSchema.optional(),
  limit: wholeNumberFlag('jobs', 1, 1000).default(50),
  cursor: jobIdStringSchema.optional(),
  json: z.boolean().default(false),
  'keep-children': z.boolean().default(false),
});
type Flags = z.output<typeof flagsSchema>;

/** Flags that mean something to one action only: given to another, a usage error rather than ignored. */
const ONLY_FOR: Record<string, (typeof ACTIONS)[number]> = {
  status: 'list',
  queue: 'list',
  type: 'list',
  limit: 'list',
  cursor: 'list',
  json: 'list',
  'keep-children': 'cancel',
};

const when = (d: Date | null) => (d ? `${d.toISOString().slice(0, 19).replace('T', ' ')} UTC` : '-');

/** One line of the last error: its name and message, cut to fit a terminal line. */
function errorLine(job: JobRecord): string {
  const e = job.lastError as { name?: unknown; message?: unknown } | null;
  if (!e || job.status === 'succeeded') return '';
  const text = `${typeof e.name === 'string' ? `${e.name}: ` : ''}${typeof e.message === 'string' ? e.message : ''}`.replace(/\s+/g, ' ');
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}

async function list(client: Client, f: Flags, io: CliIo): Promise<number> {
  const page = await client.admin.listJobs({ status: f.status, queue: f.queue, type: f.type, limit: f.limit, cursor: f.cursor });
  if (f.json) {
    io.out(JSON.stringify(page));
    return 0;
  }
  if (page.jobs.length === 0) {
    io.out('no jobs match');
    return 0;
  }
  const header = ['id', 'type', 'queue', 'status', 'attempt', 'run at', 'finished', 'last error'];
  // A job waiting with nothing to wake it on its own is stored as due in 9999: `never`, not that date.
  const rows = page.jobs.map((j) => [j.id, j.type, j.queue, j.status, `${j.attempt}/${j.maxAttempts}`, dueNever(j) ? 'never' : when(j.runAt), when(j.finishedAt), errorLine(j)]);
  for (const line of columns([header, ...rows])) io.out(line);
  // On stderr: stdout holds the table alone (`| wc -l` counted the hint as a job).
  if (page.nextCursor) io.err(`(more: add --cursor ${page.nextCursor} for the next page)`);
  return 0;
}

/** Runs `act` for each id; a refusal is one stderr line naming the job, and makes the exit code 1. */
async function eachJob(ids: string[], io: CliIo, act: (id: string) => Promise<string>): Promise<number> {
  let refused = 0;
  for (const id of ids) {
    try {
      io.out(`job ${id}: ${await act(id)}`);
    } catch (err) {
      if (!(err instanceof WorkhorseError) || err.code === 'database_unavailable') throw err;
      refused++;
      io.err(`workhorse jobs: ${err.message}`); // the message names the job
    }
  }
  return refused > 0 ? 1 : 0;
}

export const jobsCommand: Command = {
  name: 'jobs',
  summary: 'list, show, retry or cancel jobs (in WORKHORSE_NAMESPACE)',
  usage: 'workhorse jobs list [--status S] [--queue Q] [--type T] [--limit N] [--cursor ID] [--json] | show <id> | retry <id>... | cancel <id>... [--keep-children]',
  help: [
    'list                 newest first, at most --limit (default 50, up to 1000) a page; --cursor ID (printed after a full page) for the next',
    '  --status S         ready, running, waiting, succeeded, failed (dead letters) or cancelled',
    '  --queue Q, --type T  only that queue, only that job type',
    '  --json             the page as JSON ({ jobs, nextCursor }), as GET /jobs answers it',
    'show <id>            the job as JSON (payload, result, last error, the wait it is in)',
    'retry <id>...        failed or cancelled jobs: ready again with a fresh attempt budget (a scheduled one: due now)',
    'cancel <id>...       jobs not ended; --keep-children leaves their unfinished child jobs running',
    '--database-url URL   the database (default: DATABASE_URL); the namespace is WORKHORSE_NAMESPACE (default "default")',
    'a job an action cannot take is one line on stderr; the others go through, and the exit code is 1',
  ],
  async run(argv, env, io) {
    const { flags, positionals } = parseCommandLine(
      argv,
      {
        options: {
          'database-url': { type: 'string' },
          status: { type: 'string' },
          queue: { type: 'string' },
          type: { type: 'string' },
          limit: { type: 'string' },
          cursor: { type: 'string' },
          json: { type: 'boolean' },
          'keep-children': { type: 'boolean' },
        },
        positionals: ['action', 'id'],
        required: 1,
        repeatLast: true,
      },
      flagsSchema,
    );
    const [action, ...ids] = positionals;
    if (!ACTIONS.includes(action as (typeof ACTIONS)[number])) throw new UsageError(`unknown action "${action}": one of ${ACTIONS.join(', ')}`);
    for (const [flag, only] of Object.entries(ONLY_FOR)) {
      if (argv.some((a) => a === `--${flag}` || a.startsWith(`--${flag}=`)) && only !== action) throw new UsageError(`--${flag} applies to \`jobs ${only}\` only`);
    }
    if (action === 'list' && ids.length > 0) throw new UsageError('`jobs list` takes no job ids (filter with --status, --queue, --type)');
    if (action !== 'list' && ids.length === 0) throw new UsageError(`\`jobs ${action}\` needs a job id`);
    if (action === 'show' && ids.length > 1) throw new UsageError('`jobs show` takes one job id');
    for (const id of ids) if (!jobIdStringSchema.safeParse(id).success) throw new UsageError(`"${id}" is not a job id (a whole number from 1 to 2^63-1)`);
    return withOperatorClient(flags['database-url'], env, async (client) => {
      switch (action) {
        case 'list':
          return list(client, flags, io);
        case 'show': {
          const job = await client.getJob(ids[0]!);
          if (!job) throw new NotFoundError(`job ${ids[0]} not found in namespace "${client.namespace}"`);
          io.out(JSON.stringify(job, null, 2));
          return 0;
        }
        case 'retry':
          return eachJob(ids, io, async (id) => `${(await client.retry(id)).status}`);
        default:
          return eachJob(ids, io, async (id) => cancelledOrConflict(await client.cancel(id, { keepChildren: flags['keep-children'] })).status);
      }
    });
  },
};
