// An esbuild plugin that leaves enqueueMany's chunking (src/client/
// enqueueChunks.ts) out of the tick and HTTP Lambda bundles, which hold the
// client but are kept small (the tick bundle under 300,000 bytes). Nothing
// those functions run needs it: POST /jobs takes at most 1,000 jobs (one
// chunk), and the tick enqueues through the protocol, not enqueueMany. The
// client's import of it resolves to the protocol's enqueueMany (same first
// three arguments, already in the bundle), so there every batch is one
// statement, as before chunking existed: a handler's own enqueueMany of more
// than 5,000 items still works there, within what one statement can carry.
// Any other import is left alone.
import { dirname, extname, join } from 'node:path';
import type { Plugin } from 'esbuild';

const NAMESPACE = 'workhorse-client-chunks-stub';

/** The importer is workhorse's client module (a checkout's TypeScript or the installed JavaScript). */
const CLIENT_MODULE = /[\\/]src[\\/]client[\\/]client\.(ts|js)$/;

export function clientChunksStub(): Plugin {
  return {
    name: 'workhorse-client-chunks-stub',
    setup(build) {
      build.onResolve({ filter: /^\.\/enqueueChunks\.js$/ }, (args) =>
        CLIENT_MODULE.test(args.importer)
          ? { path: join(dirname(args.importer), '..', 'db', 'protocol', `enqueue${extname(args.importer)}`), namespace: NAMESPACE }
          : undefined,
      );
      build.onLoad({ filter: /.*/, namespace: NAMESPACE }, (args) => ({
        contents: `export { enqueueMany as enqueueChunked } from ${JSON.stringify(args.path)};\n`,
        loader: 'js',
        resolveDir: dirname(args.path),
      }));
    },
  };
}
