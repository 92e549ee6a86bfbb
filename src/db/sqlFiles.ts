// Finds and lists the numbered migration files in sql/. They ship beside
// the package (and beside a bundled Lambda), so the directory is found by
// walking up from this module unless the caller names it.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WorkhorseError } from '../errors.js';

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

const MIGRATION_FILE = /^(\d{3})_([a-z0-9_]+)\.sql$/;

export function findSqlDir(start = dirname(fileURLToPath(import.meta.url))): string {
  let dir = start;
  for (;;) {
    const candidate = join(dir, 'sql');
    if (existsSync(join(candidate, '001_schema.sql'))) return candidate;
    const parent = dirname(dir);
    if (parent === dir) {
      throw new WorkhorseError('sql_dir_not_found', `could not find workhorse's sql/ directory above ${start}`);
    }
    dir = parent;
  }
}

export function loadMigrations(sqlDir = findSqlDir()): Migration[] {
  return readdirSync(sqlDir)
    .map((file) => ({ file, m: MIGRATION_FILE.exec(file) }))
    .filter((x): x is { file: string; m: RegExpExecArray } => x.m !== null)
    .map(({ file, m }) => ({ version: Number(m[1]), name: m[2]!, sql: readFileSync(join(sqlDir, file), 'utf8') }))
    .sort((a, b) => a.version - b.version);
}
