// A reader that goes away before the CLI has written everything
// (`workhorse --help | head -1`, `workhorse tick app.js | jq` that exits
// early, a log pipe whose reader died) makes Node emit EPIPE on stdout or
// stderr. Unhandled, that error killed the process with a stack trace, in
// the middle of whatever the command was doing, a worker's drain included.
// The CLI ignores it instead: what it writes afterwards is dropped, and the
// command runs to its own end and exit code.

/** Codes of a write to a pipe whose reader is gone, or to the stream that write destroyed. */
const CLOSED = new Set(['EPIPE', 'ERR_STREAM_DESTROYED']);

export function ignoreClosedPipes(streams: NodeJS.WritableStream[] = [process.stdout, process.stderr]): void {
  for (const s of streams) {
    s.on('error', (err: NodeJS.ErrnoException) => {
      if (!CLOSED.has(err.code ?? '')) throw err;
    });
  }
}
