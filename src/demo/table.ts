// Renders the demo's view of one namespace as a text table: job, status,
// leased by, lease, execution, note — the columns of the fleet page.

export interface DemoRow {
  job: string;
  status: string;
  leasedBy: string;
  lease: string;
  execution: string;
  note: string;
}

const COLUMNS: [keyof DemoRow, string][] = [
  ['job', 'job'],
  ['status', 'status'],
  ['leasedBy', 'leased by'],
  ['lease', 'lease'],
  ['execution', 'execution'],
  ['note', 'note'],
];

export function renderTable(rows: DemoRow[]): string {
  const widths = COLUMNS.map(([k, h]) => Math.max(h.length, ...rows.map((r) => r[k].length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(' | ')} |`;
  return [
    line(COLUMNS.map(([, h]) => h)),
    `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`,
    ...rows.map((r) => line(COLUMNS.map(([k]) => r[k]))),
  ].join('\n');
}
