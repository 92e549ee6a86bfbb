// Bundle cost: what a Lambda cold start pays before its first claim. The
// tick and HTTP entries the CDK construct generates for examples/app.ts are
// bundled exactly as at synth time (infra/lambdaBundle.ts, the construct's
// default minify and source map), then each is imported by fresh `node`
// processes started with the NODE_OPTIONS the construct sets, the probes
// taking turns. A probe times its own `await import()` (wall and CPU), so
// the figure is the cost beyond a bare node start, without the noise of
// process creation. The Secrets Manager client, which the Node.js Lambda
// runtime provides and the handlers load on a cold start when a variable is
// given as a secret ARN, is timed the same way. No database is needed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { BUNDLE_FILE, bundleLambdaEntry } from '../../infra/lambdaBundle.js';
import { locateWorkhorse, writeEntry, type EntryKind } from '../../infra/lambdaEntries.js';
import { median } from '../stats.js';
import type { PhaseContext } from './context.js';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const EXAMPLE_APP = resolve(ROOT, 'examples/app.ts');
/** What the construct sets on every function when source maps are on (its default). */
const LAMBDA_NODE_OPTIONS = '--enable-source-maps';
const ENTRIES = ['tick', 'http'] as const satisfies readonly EntryKind[];
const SDK_CLIENTS = ['@aws-sdk/client-secrets-manager'] as const;

/** Medians over the samples of one import: wall time and CPU time (all threads). */
export interface ImportCost {
  importMs: number;
  cpuMs: number;
}

export interface BundleEntryResult extends ImportCost {
  entry: (typeof ENTRIES)[number];
  /** Minified index.mjs, without its source map. */
  bytes: number;
}

export interface BundleResult {
  samples: number;
  nodeOptions: string;
  entries: BundleEntryResult[];
  /** Runtime-provided SDK clients the handlers load lazily, timed like the bundles. */
  sdkClients: (ImportCost & { name: string })[];
}

/** One fresh node process importing `specifier` and timing that import itself. */
function timeImport(specifier: string, cwd: string): ImportCost {
  const probe =
    'const c0 = process.cpuUsage(); const t0 = performance.now();' +
    `await import(${JSON.stringify(specifier)});` +
    'const t1 = performance.now(); const c = process.cpuUsage(c0);' +
    'console.log(JSON.stringify({ importMs: t1 - t0, cpuMs: (c.user + c.system) / 1000 }));';
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', probe], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_OPTIONS: LAMBDA_NODE_OPTIONS },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`bench bundle: importing ${specifier} failed (exit ${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as ImportCost;
}

export async function measureBundle(ctx: PhaseContext): Promise<BundleResult> {
  const samples = ctx.flags['import-samples'];
  const dir = mkdtempSync(join(tmpdir(), 'workhorse-bench-bundle-'));
  try {
    const sources = locateWorkhorse(ROOT);
    const bundles = ENTRIES.map((entry) => {
      const outDir = join(dir, `${entry}-out`);
      const entryFile = writeEntry(join(dir, 'entries'), entry, EXAMPLE_APP, sources);
      bundleLambdaEntry({ entryFile, outDir, sqlDir: sources.sqlDir, minify: true, sourceMap: true, external: [] });
      const file = join(outDir, BUNDLE_FILE);
      return { entry, file, bytes: statSync(file).size };
    });
    // A bundle's directory holds no node_modules, so it is imported there
    // exactly as shipped; SDK clients resolve from this checkout.
    const probes = [
      ...bundles.map((b) => ({ key: b.entry, specifier: pathToFileURL(b.file).href, cwd: dir })),
      ...SDK_CLIENTS.map((name) => ({ key: name, specifier: name, cwd: ROOT })),
    ];
    const runs = new Map<string, ImportCost[]>(probes.map((p) => [p.key, []]));
    for (const p of probes) timeImport(p.specifier, p.cwd); // warm the file cache
    for (let i = 0; i < samples; i++) {
      for (const p of probes) runs.get(p.key)!.push(timeImport(p.specifier, p.cwd));
    }
    const cost = (key: string): ImportCost => ({
      importMs: median(runs.get(key)!.map((r) => r.importMs)),
      cpuMs: median(runs.get(key)!.map((r) => r.cpuMs)),
    });
    return {
      samples,
      nodeOptions: LAMBDA_NODE_OPTIONS,
      entries: bundles.map((b) => ({ entry: b.entry, bytes: b.bytes, ...cost(b.entry) })),
      sdkClients: SDK_CLIENTS.map((name) => ({ name, ...cost(name) })),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
