// Number formats shared by the benchmark's table and its cost lines.

/**
 * A count per job (rows, commits, index entries): two decimals from 1 up,
 * three below, and two significant digits below 0.01, so a commit per
 * batch of 500 reads 0.002 and one registry row in 20,000 jobs 0.00005.
 */
export function fmtPerJob(n: number | undefined): string {
  if (n === undefined || !Number.isFinite(n)) return '-';
  if (n === 0) return '0';
  if (n >= 10) return n.toFixed(1);
  if (n >= 1) return n.toFixed(2);
  if (n >= 0.01) return n.toFixed(3);
  return String(Number(n.toPrecision(2)));
}
