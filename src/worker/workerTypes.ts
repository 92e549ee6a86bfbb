// The Worker's public shapes (events, runtime state, the tick's internal
// knobs) and its private bookkeeping record for one held lease.
import type { ClaimedJob } from '../db/protocol.js';
import type { StaleLeaseError } from '../errors.js';
import type { JobOutcome } from './settleJob.js';

export interface WorkerEvents {
  claimed: [jobs: ClaimedJob[]];
  settled: [outcome: JobOutcome];
  /** A write by this worker was refused by the fence (the job moved on). */
  stale: [error: StaleLeaseError, job: ClaimedJob];
  error: [error: unknown];
}

export interface RuntimeState {
  workerId: string;
  registered: boolean;
  running: boolean;
  stopping: boolean;
  paused: boolean;
  localPaused: boolean;
  operatorPaused: boolean;
  active: number;
  buffered: number;
  concurrency: number;
  activeJobIds: string[];
}

/** Internal knobs the tick worker sets; not part of the public options. */
export interface WorkerInternals {
  kind?: 'process' | 'tick';
  deadline?: Date | null;
  /** Only claim jobs whose timeout fits in this many ms (computed per claim). */
  maxTimeoutMs?: () => number | null;
  /**
   * The caller already checked the schema and registered this worker id (the
   * tick's merged start call): start() only starts the heartbeat timer.
   */
  preRegistered?: boolean;
}
