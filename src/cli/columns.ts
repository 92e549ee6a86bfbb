// Rows of text as aligned columns for a terminal: each column as wide as its
// widest cell, two spaces apart, the last one left ragged. The operator
// commands' listings (`workhorse jobs list`, `workhorse queues list`).
// A cell holds what a job's handler or enqueuer wrote (a last error, a
// type): its control characters are shown escaped (terminalText.ts).
import { terminalSafe } from '../terminalText.js';

export function columns(rows: string[][]): string[] {
  if (rows.length === 0) return [];
  const safe = rows.map((r) => r.map(terminalSafe));
  const widths = safe[0]!.map((_, i) => Math.max(...safe.map((r) => (r[i] ?? '').length)));
  return safe.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}
