// The shape of one benchmark run's results: what `--json` prints and what
// the table is rendered from.
import type { Durability } from './durability.js';
import type { BenchFlags, SystemName } from './options.js';
import type { BundleResult } from './phases/bundle.js';
import type { DrainResult } from './phases/drain.js';
import type { EnqueueResult } from './phases/enqueue.js';
import type { LatencyResult } from './phases/latency.js';
import type { RawResult } from './phases/raw.js';
import type { ScaleResult } from './phases/scale.js';
import type { TickResult } from './phases/tick.js';
import type { WakeResult } from './phases/wake.js';
import type { TelemetryResult } from './phases/telemetry.js';
import type { OutboxResult } from './phases/outbox.js';
import type { SuspendResult } from './phases/suspend.js';

export interface MachineInfo {
  date: string;
  cpus: number;
  memGiB: number;
  node: string;
  postgres: string;
  /** DATABASE_URL, or the embedded server started with durable settings. */
  server: 'DATABASE_URL' | 'embedded';
  /** fsync, synchronous_commit and full_page_writes as the server runs them; figures are publishable only when `durable`. */
  durability: Durability;
  /** 1-minute load average when the run started and ended. */
  loadBefore: number;
  loadAfter: number;
}

export interface SystemResults {
  enqueue?: EnqueueResult;
  drain1?: DrainResult;
  drain2?: DrainResult;
  heldXmin?: DrainResult;
  latency?: LatencyResult;
  /** How this system was configured, in words. */
  config: string;
}

export interface BenchResults {
  machine: MachineInfo;
  flags: BenchFlags;
  systems: Partial<Record<SystemName, SystemResults>>;
  raw?: RawResult;
  tick?: TickResult;
  scale?: ScaleResult;
  bundle?: BundleResult;
  wake?: WakeResult;
  telemetry?: TelemetryResult;
  outbox?: OutboxResult;
  suspend?: SuspendResult;
  wallSeconds: number;
}
