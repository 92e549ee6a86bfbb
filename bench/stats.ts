// Summary statistics: latency percentiles (milliseconds) and the median
// round of a repeated throughput measurement.

export interface Percentiles {
  samples: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

function at(sorted: number[], q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i]!;
}

export function percentiles(values: number[]): Percentiles {
  const s = [...values].sort((a, b) => a - b);
  return { samples: s.length, p50: at(s, 0.5), p95: at(s, 0.95), p99: at(s, 0.99), max: s.length ? s[s.length - 1]! : NaN };
}

/** The round with the median rate (the lower middle one for an even count), with every round's rate. */
export function medianRound<T extends { jobsPerSec: number }>(rounds: T[]): T & { rounds: number[] } {
  if (rounds.length === 0) throw new Error('medianRound: no rounds');
  const sorted = [...rounds].sort((a, b) => a.jobsPerSec - b.jobsPerSec);
  return { ...sorted[Math.floor((sorted.length - 1) / 2)]!, rounds: rounds.map((r) => r.jobsPerSec) };
}

/** The median of a list of numbers (the mean of the two middle ones for an even count). */
export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The median of a[i] / b[i] over paired rounds; undefined unless both have the same two or more rounds. */
export function medianRatio(a: number[] | undefined, b: number[] | undefined): number | undefined {
  if (!a || !b || a.length < 2 || a.length !== b.length) return undefined;
  return median(a.map((x, i) => x / b[i]!));
}
