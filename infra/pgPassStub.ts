// An esbuild plugin that leaves pg's password-file lookup out of a Lambda
// bundle. pg/lib/client.js requires `pgpass` (about 2.6 KB minified) only
// when a connection has no password, to look one up in PGPASSFILE or
// ~/.pgpass, and pg deprecates it (removed in pg 9). A function built by
// the construct gets its credentials from its environment and Secrets
// Manager, and its file system holds the bundle and nothing the user put
// there, so the lookup can only find no file: the stub answers "no
// password", which is what the real module answered. A connection that
// needs no password (trust, an IAM token given as the password function)
// connects as before.
import type { Plugin } from 'esbuild';

const NAMESPACE = 'workhorse-pgpass-stub';

/** pgpass's interface: (connection parameters, callback(password | undefined)). */
export const PG_PASS_STUB_SOURCE = 'module.exports = function (_params, cb) { cb(undefined); };\n';

/** The importer is pg's own lib/client.js (any copy of pg, wherever it is installed). */
const PG_CLIENT = /[\\/]node_modules[\\/]pg[\\/]lib[\\/]client\.js$/;

export function pgPassStub(): Plugin {
  return {
    name: 'workhorse-pgpass-stub',
    setup(build) {
      build.onResolve({ filter: /^pgpass$/ }, (args) => (PG_CLIENT.test(args.importer) ? { path: 'pgpass', namespace: NAMESPACE } : undefined));
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, () => ({ contents: PG_PASS_STUB_SOURCE, loader: 'js' }));
    },
  };
}
