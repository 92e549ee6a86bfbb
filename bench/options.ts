// The flags of `npm run bench`, parsed once with zod. Defaults keep a full
// run under five minutes on a small machine; every size can be turned down
// (or up) from the command line.
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { ValidationError } from '../src/errors.js';
import { parseInput } from '../src/validation.js';

export const SYSTEMS = ['workhorse', 'graphile', 'pgboss'] as const;
export type SystemName = (typeof SYSTEMS)[number];

export const PHASES = ['enqueue', 'drain', 'drain2', 'latency', 'heldxmin', 'raw', 'tick', 'scale', 'bundle', 'wake', 'suspend', 'telemetry', 'outbox'] as const;
export type PhaseName = (typeof PHASES)[number];

const list = <T extends string>(all: readonly [T, ...T[]]) =>
  z
    .string()
    .transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean))
    .pipe(z.array(z.enum(all)).min(1));

const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const benchFlagsSchema = z
  .object({
    jobs: int(100, 5_000_000).default(20_000),
    concurrency: int(1, 1_000).default(24),
    /** workhorse: jobs claimed ahead of free slots (bigger claim batches). */
    prefetch: int(0, 10_000).default(476),
    systems: list(SYSTEMS).default([...SYSTEMS]),
    phases: list(PHASES).default([...PHASES]),
    'single-jobs': int(10, 100_000).default(1_000),
    'latency-samples': int(10, 10_000).default(200),
    'scale-jobs': int(1_000, 10_000_000).default(1_000_000),
    'raw-batch': int(1, 10_000).default(500),
    'raw-loops': int(1, 64).default(2),
    /** Drain and raw measurements are repeated, systems interleaved; the median round is reported. */
    rounds: int(1, 20).default(5),
    /** pg-boss: jobs per fetch. */
    'pgboss-batch': int(1, 10_000).default(50),
    /** Fresh node processes per probe in the bundle phase (median reported). */
    'import-samples': int(1, 100).default(9),
    /** The wake phase's Redis (hints only); unreachable means that part is reported as not measured. */
    'redis-url': z.string().regex(/^rediss?:\/\//, 'a redis:// URL').default('redis://127.0.0.1:6379'),
    json: z.boolean().default(false),
    keep: z.boolean().default(false),
    help: z.boolean().default(false),
  })
  .strict();

export type BenchFlags = z.output<typeof benchFlagsSchema>;

export const BENCH_USAGE = `usage: npm run bench -- [options]
  Runs on DATABASE_URL, or without it on the embedded PostgreSQL started with
  durable settings (fsync, synchronous_commit, full_page_writes on).
  --jobs N              no-op jobs per drain (default 20000)
  --concurrency C       handlers per worker process, every system (default 24)
  --prefetch P          workhorse: jobs claimed ahead of free slots (default 476, a local queue of 500)
  --systems a,b         any of ${SYSTEMS.join(', ')} (default all)
  --phases a,b          any of ${PHASES.join(', ')} (default all)
  --single-jobs N       one-at-a-time enqueues measured (default 1000)
  --latency-samples N   enqueue-to-start samples (default 200)
  --scale-jobs N        ready jobs for the scale phase (default 1000000)
  --raw-batch B         raw ceiling batch size (default 500)
  --raw-loops L         raw ceiling connections (default 2)
  --rounds R            drain and raw measurements repeated R times, systems
                        interleaved; the median round is reported (default 5)
  --pgboss-batch B      pg-boss fetch batch size (default 50)
  --import-samples N    bundle phase: fresh node processes per import probe,
                        median reported (default 9)
  --redis-url URL       wake phase: Redis for the wake hints (default redis://127.0.0.1:6379)
  --json                print one JSON document instead of the table
  --keep                keep the benchmark databases afterwards`;

export function parseBenchFlags(argv: string[]): BenchFlags {
  let values;
  try {
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        jobs: { type: 'string' },
        concurrency: { type: 'string' },
        prefetch: { type: 'string' },
        systems: { type: 'string' },
        phases: { type: 'string' },
        'single-jobs': { type: 'string' },
        'latency-samples': { type: 'string' },
        'scale-jobs': { type: 'string' },
        'raw-batch': { type: 'string' },
        'raw-loops': { type: 'string' },
        rounds: { type: 'string' },
        'pgboss-batch': { type: 'string' },
        'import-samples': { type: 'string' },
        'redis-url': { type: 'string' },
        json: { type: 'boolean' },
        keep: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new ValidationError(`bench: ${(err as Error).message}`);
  }
  return parseInput(benchFlagsSchema, values, 'bench flags');
}
