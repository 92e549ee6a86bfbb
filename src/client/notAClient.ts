// Why a value given where a Client belongs is not one. The usual reason
// beside a wrong argument: the value is a Client of another copy of
// workhorse (an application importing dist/ beside a CLI or a test running
// the TypeScript sources, or two installed versions), whose class this copy
// cannot take as its own; the message says so instead of claiming the value
// did not come from createClient().
import { ConfigError } from '../errors.js';
import { Client } from './client.js';

/** This copy is the TypeScript sources (run by tsx: a checkout's CLI or tests), not the compiled dist/ or a bundle. */
const RUNS_FROM_SOURCES = /\.ts$/.test(import.meta.url);

/** Undefined for a Client of this copy; otherwise what is wrong, for a ConfigError. */
export function notAClient(v: unknown): string | undefined {
  if (v instanceof Client) return undefined;
  const name = typeof v === 'object' && v !== null ? (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name : undefined;
  if (name === 'Client' && typeof (v as { enqueue?: unknown }).enqueue === 'function') {
    // This copy running from the TypeScript sources beside a client from dist/ is a checkout's CLI given a .ts
    // module whose `import 'workhorse'` loads the package's dist/: say so, and the two ways out.
    if (RUNS_FROM_SOURCES) {
      return (
        "the client comes from another copy of workhorse than this code, which runs from workhorse's TypeScript sources (src/): " +
        "most likely the module imports 'workhorse', which loads its compiled dist/. In a checkout of workhorse, " +
        "`node bin/workhorse.js` runs the sources for a .ts module: import from the checkout's src/index.ts in it, or compile the module and pass the .js (then the CLI runs dist/ too)"
      );
    }
    return 'the client comes from another copy of workhorse than this code (say, one imported from dist/ and one from src/, or two installed versions): import both from the same place';
  }
  return 'expected the client createClient() returns';
}

/** A ConfigError unless `v` is a Client of this copy: `who` (say, "a Worker") needs one as its first argument. */
export function assertClient(v: unknown, who: string): asserts v is Client {
  const wrong = notAClient(v);
  if (wrong) throw new ConfigError(`${who} needs a workhorse Client as its first argument: ${wrong}`, [{ path: ['client'], message: wrong }]);
}
