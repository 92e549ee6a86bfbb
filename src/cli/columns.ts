// Rows of text as aligned columns for a terminal: each column as wide as its
// widest cell, two spaces apart, the last one left ragged. The operator
// commands' listings (`workhorse jobs list`, `workhorse queues list`).
// A cell holds what a job's handler or enqueuer wrote (a last error, a
// type), so a control character (ESC starts a terminal's escape sequence:
// it can set the window title, clear the screen, recolour what follows)
// or a bidirectional override (which reverses how a line reads) is shown
// escaped, `\u001b`, never written to the operator's terminal.
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

/** `text` with its control and bidirectional formatting characters written as `\uXXXX`. */
export function terminalSafe(text: string): string {
  return text.replace(UNSAFE, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

export function columns(rows: string[][]): string[] {
  if (rows.length === 0) return [];
  const safe = rows.map((r) => r.map(terminalSafe));
  const widths = safe[0]!.map((_, i) => Math.max(...safe.map((r) => (r[i] ?? '').length)));
  return safe.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join('  ').trimEnd());
}
