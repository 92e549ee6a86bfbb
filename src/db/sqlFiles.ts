// Finds and reads the SQL that defines the schema. It ships beside the
// package (and beside a bundled Lambda), so the directory is found by
// walking up from this module unless the caller names it. `sql/ORDER` lists
// every file in the order an install runs them: the bootstrap, the numbered
// migrations (tables and indexes, applied once each), then the protocol
// files (every function and type, re-applied whenever they change).
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkhorseError } from '../errors.js';
import { protocolFunctionNames } from './missingProtocolFunctions.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface SqlFile {
  /** Path relative to sql/, as ORDER lists it. */
  path: string;
  sql: string;
}

export interface SchemaSql {
  bootstrap: SqlFile;
  migrations: Migration[];
  protocol: SqlFile[];
  /** Identifies the protocol files' contents: re-applied when it changes. */
  protocolChecksum: string;
  /** The names of the functions the protocol files create (re-applied when one is missing too). */
  protocolFunctions: string[];
}

const MIGRATION_FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export function findSqlDir(start = dirname(fileURLToPath(import.meta.url))): string {
  let dir = start;
  for (;;) {
    const candidate = join(dir, 'sql');
    if (existsSync(join(candidate, 'ORDER')) && existsSync(join(candidate, '001_schema.sql'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new WorkhorseError('sql_dir_not_found', `could not find workhorse's sql/ directory above ${start}`);
    }
    dir = parent;
  }
}

/** The files of sql/ORDER, in order. */
export function orderedSqlFiles(sqlDir = findSqlDir()): SqlFile[] {
  return readFileSync(join(sqlDir, 'ORDER'), 'utf8')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((path) => ({ path, sql: readFileSync(join(sqlDir, path), 'utf8') }));
}

export function loadSchemaSql(sqlDir = findSqlDir()): SchemaSql {
  const files = orderedSqlFiles(sqlDir);
  const bootstrap = files.find((f) => f.path === 'bootstrap.sql');
  if (!bootstrap || files[0] !== bootstrap) {
    throw new WorkhorseError('sql_dir_invalid', `${join(sqlDir, 'ORDER')} must list bootstrap.sql first`);
  }
  const migrations: Migration[] = [];
  for (const f of files) {
    const m = MIGRATION_FILE.exec(f.path);
    if (m) migrations.push({ version: Number(m[1]), name: m[2]!, sql: f.sql });
  }
  const protocol = files.filter((f) => f.path.startsWith('protocol/'));
  const hash = createHash('sha256');
  for (const f of protocol) hash.update(`${f.path}\n${f.sql}\n`);
  return {
    bootstrap,
    migrations,
    protocol,
    protocolChecksum: hash.digest('hex'),
    protocolFunctions: protocolFunctionNames(protocol.map((f) => f.sql)),
  };
}

/** The numbered migrations, oldest first. */
export function loadMigrations(sqlDir = findSqlDir()): Migration[] {
  return loadSchemaSql(sqlDir).migrations;
}
