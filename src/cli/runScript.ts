// Runs a script's main(argv) the way every workhorse command line does: its
// return value is the exit code, a typed workhorse error prints its message
// and the usage and exits 2, anything else prints in full and exits 1.
import { WorkhorseError } from '../errors.js';

export function runScript(name: string, usage: string, main: (argv: string[]) => Promise<number>): void {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      if (err instanceof WorkhorseError) {
        console.error(err.message.startsWith(`${name}:`) ? err.message : `${name}: ${err.message}`);
        console.error(usage);
        process.exitCode = 2;
      } else {
        console.error(err);
        process.exitCode = 1;
      }
    },
  );
}
