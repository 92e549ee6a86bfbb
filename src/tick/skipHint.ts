// The one line `workhorse tick` prints when a tick claimed nothing but left
// due jobs it cannot finish in its time, so "claimed: 0" says why and what
// to change. Built from the summary's per-type skip counts.
import type { TickSummary } from './summary.js';

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** undefined unless the tick claimed nothing and skipped something (needs skippedByType). */
export function skipHint(summary: TickSummary): string | undefined {
  if (summary.claimed > 0 || summary.skippedTimeout === 0 || !summary.skippedByType) return undefined;
  const parts = Object.entries(summary.skippedByType).flatMap(([type, k]) => [
    ...(k.tooLong > 0
      ? [`${type} x${k.tooLong} (timeoutMs up to ${k.longestMs} ms: raise --budget-ms above it plus the safety margin)`]
      : []),
    ...(k.cutOff > 0
      ? [`${type} x${k.cutOff} (no timeoutMs, and a tick already cut off a ${seconds(k.longestMs)} run: give it a timeoutMs, or use a longer tick or a long-lived worker)`]
      : []),
  ]);
  return `claimed nothing: ${summary.skippedTimeout} due job(s) cannot finish in this tick's time: ${parts.join('; ')}`;
}
