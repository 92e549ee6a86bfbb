#!/usr/bin/env node
// The `workhorse` executable: runs the compiled CLI, or the TypeScript
// sources through tsx in a checkout that has not been built.
import { existsSync } from 'node:fs';

const dist = new URL('../dist/src/cli/main.js', import.meta.url);
let mod;
if (existsSync(dist)) {
  mod = await import(dist.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  mod = await import(new URL('../src/cli/main.ts', import.meta.url).href);
}
process.exitCode = await mod.main(process.argv.slice(2));
