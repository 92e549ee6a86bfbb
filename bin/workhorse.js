#!/usr/bin/env node
// The `workhorse` executable: the compiled CLI in an installed package; in a
// checkout (sources present, tsx installed) the TypeScript sources through
// tsx, so an edit never runs against a stale dist/ build.
import { existsSync } from 'node:fs';

const sources = new URL('../src/cli/main.ts', import.meta.url);
const tsx = existsSync(sources) ? await import('tsx/esm/api').catch(() => undefined) : undefined;
let mod;
if (tsx) {
  tsx.register();
  mod = await import(sources.href);
} else {
  mod = await import(new URL('../dist/src/cli/main.js', import.meta.url).href);
}
// A reader that closed the pipe (`workhorse --help | head -1`) is not a crash.
mod.ignoreClosedPipes();
process.exitCode = await mod.main(process.argv.slice(2));
