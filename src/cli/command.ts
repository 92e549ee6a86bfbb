// The shape of one CLI command. Each command lives in its own module under
// commands/ and parses its own arguments with zod.
import type { EnvConfig } from '../config.js';

export interface CliIo {
  out: (line: string) => void;
  err: (line: string) => void;
}

export interface Command {
  name: string;
  summary: string;
  usage: string;
  /** Returns the process exit code. */
  run(argv: string[], env: EnvConfig, io: CliIo): Promise<number>;
}
