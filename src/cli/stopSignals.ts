// The signals a long-running CLI command (`worker`, `tick`) takes as "stop":
// SIGTERM (a process manager, a container's stop), SIGINT (Ctrl-C) and
// SIGHUP (a closed terminal, a reload). The first stops gracefully, a
// second exits at once; each command says what graceful means for it.
//
// Their handlers are in place from the start of the process: bin/workhorse.js
// calls takeStopSignals before it loads the rest of the CLI (which takes
// a while on a loaded machine), and the command then loads its module (and
// the tick checks the schema). Until the command says its work has started,
// the first signal ends the process with exit 0 and one line: nothing is
// claimed yet, so there is nothing to drain. Left to Node, a signal in that
// window ended the process by the signal (exit 143, 130 or 129) and said
// nothing.
export const STOP_SIGNALS: readonly NodeJS.Signals[] = ['SIGTERM', 'SIGINT', 'SIGHUP'];

/** The commands that stop on these signals, and what they call their work ("SIGTERM before the tick started"). */
const WORK = { worker: 'the workers', tick: 'the tick' };
type StoppingCommand = keyof typeof WORK;

export interface StopSignals {
  /** Aborted by the first stop signal once the work has started. */
  readonly signal: AbortSignal;
  /**
   * The work has started: from now on each stop signal goes to `onSignal`
   * (`nth` counts them, from 1; the first has aborted `signal` by then)
   * instead of ending the process.
   */
  started(onSignal: (signal: NodeJS.Signals, nth: number) => void): void;
  /** The command is done: the signals get Node's default action again. */
  release(): void;
}

let current: { command: StoppingCommand; stop: StopSignals; setLog(log: (line: string) => void): void } | undefined;

function install(command: StoppingCommand, log: (line: string) => void): NonNullable<typeof current> {
  const what = WORK[command];
  const controller = new AbortController();
  let onStarted: ((signal: NodeJS.Signals, nth: number) => void) | undefined;
  let nth = 0;
  const onSignal = (signal: NodeJS.Signals) => {
    nth++;
    if (!onStarted) {
      log(`[workhorse] ${signal} before ${what} started: exiting 0`);
      process.exit(0);
    }
    if (nth === 1) controller.abort();
    onStarted(signal, nth);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  const stop: StopSignals = {
    signal: controller.signal,
    started(handler) {
      onStarted = handler;
    },
    release() {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
      if (current?.stop === stop) current = undefined;
    },
  };
  return { command, stop, setLog: (l) => (log = l) };
}

/**
 * Called by bin/workhorse.js first thing, with the command line: when the
 * command is one that stops on signals (`worker`, `tick`), installs the
 * handlers now, for the command to take with stopSignalsFor.
 */
export function takeStopSignals(argv: readonly string[]): void {
  // The command's name as main reads it: the first argument that is not --verbose.
  const command = argv.find((a) => a !== '--verbose');
  if (command === undefined || !Object.hasOwn(WORK, command) || current) return;
  current = install(command as StoppingCommand, (line) => console.error(line));
}

/**
 * The stop handlers of `command`, logging through `log`: those the process
 * installed as it started, or new ones (main called without
 * bin/workhorse.js). The command calls this first thing, calls `started`
 * once its work runs, and `release` when it is done.
 */
export function stopSignalsFor(command: StoppingCommand, log: (line: string) => void): StopSignals {
  if (current?.command !== command) {
    // The new handlers first: with none at all for a moment, a signal would end the process.
    const previous = current;
    current = install(command, log);
    previous?.stop.release();
  }
  current.setLog(log);
  return current.stop;
}
