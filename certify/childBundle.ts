// Child processes start often here (the killer replaces one every K s; the
// benchmark forks a few dozen), so their start-up cost matters. Compiled
// (dist) a child entry is plain JavaScript. From TypeScript sources it is
// bundled once per run with esbuild (a dev dependency; both are development
// tools) into node_modules/.cache, where the bundle's package imports still
// resolve, so a child starts in a fraction of the time `--import tsx` takes.
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';

export interface ChildEntry {
  file: string;
  execArgv: string[];
  /** Removes the bundle, if one was written. */
  dispose(): Promise<void>;
}

const CACHE_DIR = fileURLToPath(new URL('../node_modules/.cache/workhorse-children/', import.meta.url));

/** `entry` is the child's module URL without its extension (e.g. new URL('./workerChild', import.meta.url)). */
export async function prepareChildEntry(entry: URL): Promise<ChildEntry> {
  const js = fileURLToPath(`${entry.href}.js`);
  if (existsSync(js)) return { file: js, execArgv: [], dispose: async () => undefined };
  const ts = fileURLToPath(`${entry.href}.ts`);
  const base = ts.split('/').pop()!.replace(/\.ts$/, '');
  try {
    const esbuild = await import('esbuild');
    await mkdir(CACHE_DIR, { recursive: true });
    const outfile = `${CACHE_DIR}${base}-${process.pid}-${randomBytes(3).toString('hex')}.mjs`;
    await esbuild.build({ entryPoints: [ts], outfile, bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', logLevel: 'error' });
    return { file: outfile, execArgv: [], dispose: () => rm(outfile, { force: true }) };
  } catch {
    // No esbuild (or no writable cache): run the sources through tsx.
    return { file: ts, execArgv: ['--import', 'tsx'], dispose: async () => undefined };
  }
}
