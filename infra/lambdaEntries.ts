// Writes the tiny entry modules the construct bundles: each imports the
// user's app module and hands it to a workhorse handler factory, so the
// bundle is fully static (no module loaded by path at run time) and holds
// exactly the user's jobs and handlers. Each entry imports its handler
// factory from that factory's own module, not from the package index, so the
// bundle holds what its function runs and nothing the other one needs (the
// tick carries no HTTP app). One directory per function, because the
// directory is the asset's source.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError } from '../src/errors.js';

export type EntryKind = 'tick' | 'http' | 'migrate';

export interface WorkhorseSources {
  /** The module exporting createTickHandler. */
  tickHandler: string;
  /** The module exporting createHttpHandler. */
  httpHandler: string;
  /** The migration Lambda entry. */
  migrateHandler: string;
  /** The numbered migration files. */
  sqlDir: string;
}

/** The workhorse package this construct belongs to: above infra/ in a checkout, above dist/infra/ when installed. */
export function defaultWorkhorseRoot(): string {
  const above = resolve(dirname(fileURLToPath(import.meta.url)), '..');
  return basename(above) === 'dist' && existsSync(join(above, '..', 'package.json')) ? resolve(above, '..') : above;
}

function firstExisting(root: string, candidates: string[], what: string): string {
  for (const c of candidates) {
    const p = join(root, c);
    if (existsSync(p)) return p;
  }
  throw new ConfigError(`WorkhorseTickWorker: cannot find ${what} under ${root} (looked for ${candidates.join(', ')})`);
}

/** Finds the sources (TypeScript in a checkout, compiled JavaScript in an installed package). */
export function locateWorkhorse(root: string): WorkhorseSources {
  return {
    tickHandler: firstExisting(root, ['src/tick/handler.ts', 'dist/src/tick/handler.js'], 'the tick handler module'),
    httpHandler: firstExisting(root, ['src/http/lambda.ts', 'dist/src/http/lambda.js'], 'the HTTP handler module'),
    migrateHandler: firstExisting(root, ['handlers/migrate.ts', 'dist/handlers/migrate.js'], 'the migration handler'),
    sqlDir: firstExisting(root, ['sql'], 'the sql/ migrations directory'),
  };
}

/** Resolves the user's app module path and checks that it exists. */
export function resolveAppModule(app: string): string {
  const path = resolve(app);
  if (!existsSync(path)) {
    throw new ConfigError(`WorkhorseTickWorker: the app module ${path} does not exist`, [
      { path: ['app'], message: 'file not found' },
    ]);
  }
  return path;
}

/** The source text of one entry module. */
export function entrySource(kind: EntryKind, appModule: string, sources: WorkhorseSources): string {
  const lit = (p: string) => JSON.stringify(p);
  switch (kind) {
    case 'tick':
      return [
        `import app from ${lit(appModule)};`,
        `import { createTickHandler } from ${lit(sources.tickHandler)};`,
        'export const handler = createTickHandler(app);',
        '',
      ].join('\n');
    case 'http':
      return [
        `import app from ${lit(appModule)};`,
        `import { createHttpHandler } from ${lit(sources.httpHandler)};`,
        'export const handler = createHttpHandler(app);',
        '',
      ].join('\n');
    case 'migrate':
      return `export { handler } from ${lit(sources.migrateHandler)};\n`;
  }
}

/** Writes the entry for `kind` into its own directory under `buildDir`; returns the file path. */
export function writeEntry(buildDir: string, kind: EntryKind, appModule: string, sources: WorkhorseSources): string {
  const dir = join(buildDir, kind);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'entry.mjs');
  writeFileSync(file, entrySource(kind, appModule, sources));
  return file;
}
