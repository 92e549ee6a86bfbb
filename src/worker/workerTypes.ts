// The Worker's public shapes: its events and its runtime state.
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
  /** Handlers that finished whose outcomes are not written yet (a settlement batched, or retried through a fault). */
  settling: number;
  buffered: number;
  concurrency: number;
  activeJobIds: string[];
  /** Handlers' outcomes this worker gave up writing since it was made (their jobs run again after recovery, an attempt counted). */
  droppedOutcomes: number;
  /** How long its heartbeats have been failing (refused, cancelled or unanswered), in ms; 0 when the last one went through. */
  heartbeatFailingMs: number;
}
