// The shape of one CLI command. Each command lives in its own module under
// commands/, declares its usage and options for `--help`, and parses its
// own arguments (args.ts). It returns its exit code or throws: main turns
// the error into one line and exit code 2 or 1 (failure.ts).
import type { EnvConfig } from '../config.js';

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** The options and arguments `--help` lists, one per line. */
  help: string[];
  /** Returns the process exit code. */
  run(argv: string[], env: EnvConfig, io: CliIo): Promise<number>;
}
