// Rows of text as aligned columns for a terminal: each column as wide as its
// widest cell, two spaces apart, the last one left ragged. The operator
// commands' listings (`workhorse jobs list`, `workhorse queues list`).
export function columns(rows: string[][]): string[] {
  if (rows.length === 0) return [];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}
