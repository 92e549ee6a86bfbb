// The program a child Node process runs to bundle with esbuild's plugins.
// Plugins only work with esbuild's asynchronous build, and CDK's local
// bundling hook is synchronous, so lambdaBundle.ts bundles this file, starts
// it with spawnSync and waits: argv carries the path of the esbuild package
// to load and the build options (JSON); the exit code says whether the
// bundle was written, and esbuild's own messages go to stderr.
import type * as Esbuild from 'esbuild';
import { clientMigrateStub } from './clientMigrateStub.js';
import { pgNativeStub } from './pgNativeStub.js';
import { pgPassStub } from './pgPassStub.js';

const [esbuildPath, optionsJson] = process.argv.slice(2);
const esbuild = ((await import(esbuildPath!)) as { default: typeof Esbuild }).default;
try {
  await esbuild.build({ ...(JSON.parse(optionsJson!) as Esbuild.BuildOptions), plugins: [pgNativeStub(), pgPassStub(), clientMigrateStub()] });
} catch (err) {
  // esbuild has printed a build's errors (logLevel 'error'); anything else is printed here.
  if (!Array.isArray((err as { errors?: unknown }).errors)) console.error(err);
  process.exitCode = 1;
}
