// An esbuild plugin that leaves pg's native binding out of a Lambda bundle.
// pg/lib/index.js reaches its libpq client (pg/lib/native, about 8 KB
// minified) through `require('./native')`, only when NODE_PG_FORCE_NATIVE is
// set or `pg.native` is read. That client needs pg-native, which a bundle
// never carries (ALWAYS_EXTERNAL), so in a bundle the require can only throw
// MODULE_NOT_FOUND, which pg's `native` getter catches (pg.native is null).
// The plugin resolves that one import to a module throwing the same error,
// so the bundle behaves as before without the code it could never run.
import type { Plugin } from 'esbuild';

const NAMESPACE = 'workhorse-pg-native-stub';

/** What the stub throws: the error Node's require gives for a missing module, with pg's reason. */
export const PG_NATIVE_STUB_SOURCE =
  "const err = new Error(\"Cannot find module 'pg-native': this bundle leaves pg's native binding out\");\n" +
  "err.code = 'MODULE_NOT_FOUND';\n" +
  'throw err;\n';

/** The importer is pg's own lib/index.js (any copy of pg, wherever it is installed). */
const PG_INDEX = /[\\/]node_modules[\\/]pg[\\/]lib[\\/]index\.js$/;

export function pgNativeStub(): Plugin {
  return {
    name: 'workhorse-pg-native-stub',
    setup(build) {
      build.onResolve({ filter: /^\.\/native$/ }, (args) => (PG_INDEX.test(args.importer) ? { path: 'pg-native', namespace: NAMESPACE } : undefined));
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, () => ({ contents: PG_NATIVE_STUB_SOURCE, loader: 'js' }));
    },
  };
}
