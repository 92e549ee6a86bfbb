// Loads the user's app module (its default export is defineApp(...)) from a
// path or a file URL: how the shipped Lambda entry and `workhorse tick` find
// the job definitions and handlers.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isWorkhorseApp, type WorkhorseApp } from '../app/defineApp.js';
import { ConfigError } from '../errors.js';


/** `label` names the module in the error (the CLI passes the path it was given, not the file URL it loads). */
export async function loadAppModule(specifier: string, what = 'WORKHORSE_APP', label = specifier): Promise<WorkhorseApp> {
  const url = /^file:/.test(specifier) ? specifier : pathToFileURL(resolve(specifier)).href;
  let path: string | undefined;
  try {
    path = fileURLToPath(url);
  } catch {
    // not a local file URL: left to import() to refuse
  }
  if (path !== undefined && !existsSync(path)) {
    const message = `${label}: no such file (${path}): point ${what} at the compiled module whose default export is defineApp(...)`;
    throw new ConfigError(message, [{ path: [what], message }]);
  }
  const mod = (await import(url)) as { default?: unknown; app?: unknown };
  // A CommonJS build exposes its default export one level down.
  const candidates = [mod.default, (mod.default as { default?: unknown } | undefined)?.default, mod.app];
  const app = candidates.find(isWorkhorseApp);
  if (!app) {
    const message = `${label}: the default export must be defineApp({ jobs, configure })`;
    throw new ConfigError(message, [{ path: [what], message }]);
  }
  return app;
}
