// The certification's settings, parsed once with zod (from CLI flags by
// main.ts, or passed in directly by the test suite).
import { parseArgs } from 'node:util';
import * as z from 'zod';
import { ValidationError } from '../src/errors.js';
import { parseConfig, parseInput } from '../src/validation.js';

export const certifyOptionsSchema = z
  .object({
    /** `process`: long-lived worker processes; `tick`: processes invoking runTick with short deadlines. */
    mode: z.enum(['process', 'tick']).default('process'),
    workers: z.number().int().min(1).max(64).default(8),
    executors: z.number().int().min(1).max(256).default(16),
    /** The killer SIGKILLs a random worker process this often and starts a replacement. */
    killEveryMs: z.number().int().min(100).max(3_600_000).default(2000),
    jobs: z.number().int().min(1).max(10_000_000).default(100_000),
    /** Steps per job: S-1 plain steps and one transactional step. */
    steps: z.number().int().min(2).max(100).default(3),
    /** Worker heartbeat: the lease is 4 of them, so recovery follows a kill within about 4 heartbeats. */
    heartbeatMs: z.number().int().min(50).max(60_000).default(500),
    /** Each tick invocation's time limit (tick mode). */
    tickMs: z.number().int().min(500).max(900_000).default(3000),
    /** Give up (and report what is unfinished) after this long. */
    timeoutMs: z.number().int().min(1000).max(86_400_000).default(1_800_000),
    namespace: z.string().regex(/^[A-Za-z0-9_.-]{1,40}$/).default('certify'),
    /** Keep the certification database afterwards. */
    keep: z.boolean().default(false),
    /**
     * Database faults on top of the SIGKILLs: the run owns its PostgreSQL
     * cluster and, every faultEveryMs, terminates every workhorse backend or
     * restarts the server (alternately, a restart every third fault).
     */
    faults: z.boolean().default(false),
    faultEveryMs: z.number().int().min(500).max(3_600_000).default(3000),
    /**
     * Durable waits too: every job also sleeps, waits for a signal the
     * harness sends it and spawns and joins one child job.
     */
    durable: z.boolean().default(false),
  })
  .strict();

export type CertifyOptions = z.input<typeof certifyOptionsSchema>;
export type ResolvedCertifyOptions = z.output<typeof certifyOptionsSchema>;

export function resolveCertifyOptions(o: CertifyOptions): ResolvedCertifyOptions {
  return parseConfig(certifyOptionsSchema, o, 'certify options');
}

export const CERTIFY_USAGE = `usage: npm run certify -- [options]
  --mode process|tick   long-lived worker processes (default) or runTick invocations
  --workers W           worker processes (default 8)
  --executors E         handlers per worker (default 16)
  --kill-every-ms K     SIGKILL a random worker this often, then replace it (default 2000)
  --jobs J              jobs to run (default 100000)
  --steps S             steps per job: S-1 plain steps + 1 transactional step (default 3)
  --heartbeat-ms H      worker heartbeat; lease = 4 heartbeats (default 500)
  --tick-ms T           each tick's time limit in tick mode (default 3000)
  --timeout-ms M        give up after this long (default 1800000)
  --faults              also terminate every backend or restart PostgreSQL (a cluster the run owns)
  --fault-every-ms F    one database fault this often with --faults (default 3000)
  --durable             jobs also sleep, wait for a signal the harness sends and spawn and join a child
  --json                print the report as JSON
  --keep                keep the certification database`;

const flagsSchema = z
  .object({
    mode: z.enum(['process', 'tick']).optional(),
    workers: z.coerce.number().optional(),
    executors: z.coerce.number().optional(),
    'kill-every-ms': z.coerce.number().optional(),
    jobs: z.coerce.number().optional(),
    steps: z.coerce.number().optional(),
    'heartbeat-ms': z.coerce.number().optional(),
    'tick-ms': z.coerce.number().optional(),
    'timeout-ms': z.coerce.number().optional(),
    json: z.boolean().default(false),
    keep: z.boolean().default(false),
    faults: z.boolean().default(false),
    'fault-every-ms': z.coerce.number().optional(),
    durable: z.boolean().default(false),
    help: z.boolean().default(false),
  })
  .strict();

export function parseCertifyFlags(argv: string[]): { options: ResolvedCertifyOptions; json: boolean; help: boolean } {
  let values;
  try {
    const str = { type: 'string' } as const;
    values = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        mode: str,
        workers: str,
        executors: str,
        'kill-every-ms': str,
        jobs: str,
        steps: str,
        'heartbeat-ms': str,
        'tick-ms': str,
        'timeout-ms': str,
        json: { type: 'boolean' },
        keep: { type: 'boolean' },
        faults: { type: 'boolean' },
        'fault-every-ms': str,
        durable: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    }).values;
  } catch (err) {
    throw new ValidationError(`certify: ${(err as Error).message}`);
  }
  const f = parseInput(flagsSchema, values, 'certify flags');
  const options = parseInput(
    certifyOptionsSchema,
    {
      mode: f.mode,
      workers: f.workers,
      executors: f.executors,
      killEveryMs: f['kill-every-ms'],
      jobs: f.jobs,
      steps: f.steps,
      heartbeatMs: f['heartbeat-ms'],
      tickMs: f['tick-ms'],
      timeoutMs: f['timeout-ms'],
      keep: f.keep,
      faults: f.faults,
      faultEveryMs: f['fault-every-ms'],
      durable: f.durable,
    },
    'certify flags',
  );
  return { options, json: f.json, help: f.help };
}
