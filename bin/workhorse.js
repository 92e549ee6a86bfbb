#!/usr/bin/env node
// The `workhorse` executable. Installed as a dependency (run through a
// node_modules path: `npx workhorse`, node_modules/.bin/workhorse, an npm
// script) it runs the compiled CLI in dist/, the copy an application's
// `import 'workhorse'` loads too, even when the package is a checkout
// linked in with `npm install <dir>`: from the sources instead, the CLI's
// classes (its Client, its errors) would not be the application's, and
// `workhorse worker app.js` refused the application's own client. Run from
// a checkout itself (`node bin/workhorse.js`), with tsx installed, it runs
// the TypeScript sources, so an edit never runs against a stale dist/
// build, unless the command loads a compiled module (`worker app.js`,
// `tick app.js`, `serve --app app.js`): that module's `import 'workhorse'`
// loads dist/, so the CLI does too. Without dist/ (a checkout not yet
// built) it runs the sources in every case.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
const compiled = new URL('../dist/src/cli/main.js', import.meta.url);
const asDependency = /[\\/]node_modules[\\/]/.test(process.argv[1] ?? '');
const fromSources = existsSync(sources) && !((asDependency || loadsCompiledModule(process.argv.slice(2))) && existsSync(compiled));
const tsx = fromSources ? await import('tsx/esm/api').catch(() => undefined) : undefined;
tsx?.register();
// `worker` and `tick` take SIGTERM, SIGINT and SIGHUP as "stop" from here on,
// before the rest of the CLI loads: a signal while it loads no longer ends the
// process by the signal, saying nothing (src/cli/stopSignals.ts).
const stopSignals = new URL(tsx ? '../src/cli/stopSignals.ts' : '../dist/src/cli/stopSignals.js', import.meta.url);
(await import(stopSignals.href)).takeStopSignals(process.argv.slice(2));
const mod = await import(tsx ? sources.href : compiled.href);
// A reader that closed the pipe (`workhorse --help | head -1`) is not a crash.
mod.ignoreClosedPipes();
// Ends the process once the command returned, even if something in it lingers (main.ts, endProcess).
mod.endProcess(await mod.main(process.argv.slice(2)));

/** Whether the command names an application module that is JavaScript (`worker app.js`, `tick app.mjs`, `serve --app app.js`). */
function loadsCompiledModule(argv) {
  // The arguments as the CLI reads them: --verbose goes anywhere before `--` (`--verbose worker app.js`).
  const end = argv.indexOf('--');
  const [command, ...rest] = argv.filter((a, i) => a !== '--verbose' || (end >= 0 && i > end));
  let module;
  if (command === 'worker' || command === 'tick') module = rest.find((a) => !a.startsWith('-'));
  if (command === 'serve') {
    const i = rest.indexOf('--app');
    module = i >= 0 ? rest[i + 1] : rest.find((a) => a.startsWith('--app='))?.slice('--app='.length);
  }
  return typeof module === 'string' && /\.[cm]?js$/.test(module);
}
