// The reason a PostgreSQL server or initdb gave for failing, from the tail
// of its log: its first FATAL, PANIC or error line, with the log prefix
// (time, pid) cut, and its HINT when one follows. The CLI shows an error's
// first line only, and the failures of the embedded server put the reason
// on the lines after it: `workhorse demo: the embedded PostgreSQL exited at
// start:` said nothing more (a second demo on the same data directory, an
// unreadable directory).

const REASON = /\b(FATAL|PANIC|ERROR|error):\s+(.*)$/;
const HINT = /\bHINT:\s+(.*)$/;

/** The reason in `logTail`, one line; the last non-empty line when no line says FATAL or error. */
export function serverLogReason(logTail: string): string {
  const lines = logTail.split('\n').map((l) => l.trim()).filter((l) => l !== '');
  const at = lines.findIndex((l) => REASON.test(l));
  if (at < 0) return lines.at(-1) ?? 'no reason in its log';
  const reason = REASON.exec(lines[at]!)![2]!;
  const hint = lines.slice(at + 1).map((l) => HINT.exec(l)?.[1]).find((h) => h !== undefined);
  return hint ? `${reason} (${hint})` : reason;
}
