// The messages a benchmark child process and its parent exchange over the
// IPC channel. Timestamps are epoch milliseconds with sub-millisecond
// precision (performance.timeOrigin + performance.now()), comparable
// between processes on one machine.
import type { SystemName } from '../options.js';

export type Scenario =
  | { kind: 'enqueue'; bulk: number; single: number }
  | { kind: 'fill'; count: number }
  | { kind: 'drain'; concurrency: number; prefetch: number; batch: number }
  | { kind: 'latency'; concurrency: number; prefetch: number; batch: number; samples: number }
  | { kind: 'raw'; jobs: number; batch: number; loops: number };

export interface ChildTask {
  system: SystemName;
  url: string;
  scenario: Scenario;
}

export type ParentMessage = { cmd: 'go' } | { cmd: 'stop' };

export type ChildMessage =
  | { ev: 'ready' }
  | { ev: 'first'; at: number }
  | { ev: 'progress'; n: number; at: number }
  | { ev: 'result'; data: Record<string, unknown> }
  | { ev: 'error'; message: string };

export const now = (): number => performance.timeOrigin + performance.now();
