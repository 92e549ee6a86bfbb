// Loads a module the user names on the command line (an app module, a
// worker process module). A path that does not exist or is a directory, or TypeScript the
// running Node cannot load, is a UsageError saying what to do; a module that
// fails while loading, or whose loading can never finish (a top-level await
// that never settles), is a runtime failure naming the module.
import { existsSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { WorkhorseError } from '../errors.js';
import { UsageError } from './usageError.js';

const TYPESCRIPT = /\.[cm]?tsx?$/;

/** The module failed while loading (a syntax error, a missing dependency, a throw at import, a top-level await that never settles). */
export class ModuleLoadError extends WorkhorseError {
  constructor(specifier: string, cause: unknown) {
    // Node's SyntaxError for an ES module names neither the file nor the line (only its own uncaught-error printout does).
    const where = cause instanceof SyntaxError ? ` (a syntax error: \`node --check ${specifier}\` shows the file and line)` : '';
    super('module_load_failed', `could not load ${specifier}: ${cause instanceof Error ? firstLines(cause.message) : String(cause)}${where}`, { cause });
  }
}

/**
 * The first line of a load error's message, and the next one when the first
 * only announces it (a TypeScript loader's "Transform failed with 1 error:"
 * is followed by the file, line and what is wrong).
 */
function firstLines(message: string): string {
  const [first = '', second] = message.split('\n');
  return first.trimEnd().endsWith(':') && second?.trim() ? `${first.trimEnd()} ${second.trim()}` : first;
}

function codeOf(err: unknown): unknown {
  return (err as { code?: unknown } | null)?.code;
}

/** The file URL of an existing module, or a UsageError naming `what`. */
export function userModuleUrl(specifier: string, what: string): string {
  // An empty argument (`worker ""`, an unset variable in a script) resolves to the working directory.
  if (specifier.trim() === '') throw new UsageError(`${what} is an empty path: name the module file (for example dist/app.js)`);
  let url: URL;
  try {
    url = /^file:/.test(specifier) ? new URL(specifier) : pathToFileURL(resolve(specifier));
  } catch {
    throw new UsageError(`${what} "${specifier}" is not a path or a file URL`);
  }
  const path = fileURLToPath(url);
  if (!existsSync(path)) throw new UsageError(`${what} "${specifier}" not found`);
  if (statSync(path).isDirectory()) throw new UsageError(`${what} "${specifier}" is a directory: name the module file (for example dist/app.js)`);
  return url.href;
}

/** Why a load that can no longer finish failed. */
const NEVER_FINISHED = 'its loading never finished: a top-level await that never settles (nothing is left that could settle it)';

/**
 * `loading`, or a rejection once nothing is left to run while it is still
 * pending: a module whose top-level await never settles (it awaits a
 * promise nobody resolves) would otherwise leave the process to end on its
 * own, with Node's exit code 13 and nothing said. The event loop emptying
 * (`beforeExit`) means nothing can settle the import any more.
 */
function untilStalled<T>(loading: Promise<T>): Promise<T> {
  let onStall!: () => void;
  const stalled = new Promise<never>((_, reject) => {
    onStall = () => reject(new Error(NEVER_FINISHED));
  });
  process.once('beforeExit', onStall);
  return Promise.race([loading, stalled]).finally(() => process.off('beforeExit', onStall));
}

/**
 * Runs `load(url)` for an existing module and turns a failed import into a
 * clear error; errors `load` throws on purpose (a WorkhorseError, e.g. a bad
 * default export) pass through.
 */
export async function loadUserModule<T>(specifier: string, what: string, load: (url: string) => Promise<T>): Promise<T> {
  const url = userModuleUrl(specifier, what);
  try {
    return await untilStalled(load(url));
  } catch (err) {
    if (err instanceof WorkhorseError) throw err;
    if (codeOf(err) === 'ERR_UNKNOWN_FILE_EXTENSION' && TYPESCRIPT.test(specifier)) {
      throw new UsageError(
        `${what} "${specifier}" is TypeScript, and the CLI loads compiled JavaScript: compile it first (for example \`npx tsc\`) and pass the .js file`,
      );
    }
    throw new ModuleLoadError(specifier, err);
  }
}
