// An esbuild plugin that leaves the migrator out of the tick and HTTP Lambda
// bundles. Client.migrate() imports src/db/migrate with a dynamic import,
// its only way into those bundles (about 3 KB minified with the SQL file
// loader); the functions never migrate (the stack's migration function
// does, and they only check the schema), so the plugin resolves that import
// to a module whose migrate() throws a clear error. Any other import of the
// migrator (the migration function's own, a static one) is left alone.
import type { Plugin } from 'esbuild';

const NAMESPACE = 'workhorse-client-migrate-stub';

export const CLIENT_MIGRATE_STUB_MESSAGE =
  'client.migrate() is left out of the workhorse tick and HTTP Lambda bundles: ' +
  "the stack's migration function applies the schema (or run `workhorse migrate` at deploy time)";

const STUB_SOURCE = `export async function migrate() { throw new Error(${JSON.stringify(CLIENT_MIGRATE_STUB_MESSAGE)}); }\n`;

/** The importer is workhorse's client module (a checkout's TypeScript or the installed JavaScript). */
const CLIENT_MODULE = /[\\/]src[\\/]client[\\/]client\.(ts|js)$/;

export function clientMigrateStub(): Plugin {
  return {
    name: 'workhorse-client-migrate-stub',
    setup(build) {
      build.onResolve({ filter: /^\.\.\/db\/migrate\.js$/ }, (args) =>
        args.kind === 'dynamic-import' && CLIENT_MODULE.test(args.importer) ? { path: 'migrate', namespace: NAMESPACE } : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, () => ({ contents: STUB_SOURCE, loader: 'js' }));
    },
  };
}
