// What the benchmark needs from each queue system: install its schema,
// enqueue no-op jobs in bulk and one at a time, and run a worker that calls
// back once per handled job. Each system implements this in its own module
// and always runs inside a child process of the benchmark.

export interface WorkerSettings {
  concurrency: number;
  /** workhorse: extra jobs claimed ahead of free slots. */
  prefetch: number;
  /** pg-boss: jobs per fetch. */
  batch: number;
  /** Called at the start of each handler with the job's payload. */
  onStart(payload: unknown): void;
}

export interface RunningWorker {
  /** Stops the worker and waits until its settlements are written. */
  stop(): Promise<void>;
}

export interface QueueSystem {
  readonly name: string;
  /** The schema that holds the system's tables (whose row counters the drain reads). */
  readonly schema: string;
  /** Installs the system's schema in an empty database. */
  install(url: string): Promise<void>;
  /** Opens the producer side (pools, instances). */
  open(url: string): Promise<void>;
  /** Enqueues `count` no-op jobs with payloads { i: from.. } in few statements. */
  enqueueBulk(from: number, count: number): Promise<void>;
  /** Enqueues one no-op job in its own statement. */
  enqueueOne(i: number): Promise<void>;
  startWorker(url: string, settings: WorkerSettings): Promise<RunningWorker>;
  /** Jobs not yet completed, from the database. */
  pending(): Promise<number>;
  close(): Promise<void>;
}

export const NOOP = 'noop';
export const QUEUE = 'bench';
/** Bulk enqueues are sent in chunks of this size. */
export const BULK_CHUNK = 5_000;
