// workhorse installed as a package, the way a user installs it: `npm pack`
// (which builds dist/ through the prepare script), then `npm install` of the
// tarball into a fresh project, next to the CDK peers. A plain Node ESM
// script there imports `workhorse`, `workhorse/signing` and `workhorse/infra`
// with the project's own zod, signs a request and synthesises the construct
// (bundling its Lambdas from the installed dist/); the installed bin migrates
// a fresh database; a CommonJS script requires it; the embedded
// PostgreSQL starts from the installed
// binaries; a strict TypeScript project (no skipLibCheck) type-checks
// against the shipped declarations, which name pg's types. The npm cache is
// preferred, so this takes about half a minute.
import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSchemaVersion } from '../../src/db/schemaCheck.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { createEmptyDatabase } from '../helpers/db.js';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'wh-package-'));
const project = join(work, 'consumer');
const SECRET = 'consumer-secret-0123456789';

function run(cmd: string, args: string[], cwd: string): Promise<{ code: number | null; out: string }> {
  const child = spawn(cmd, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, out }));
  });
}

async function mustRun(cmd: string, args: string[], cwd: string): Promise<string> {
  const r = await run(cmd, args, cwd);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.out}`);
  return r.out;
}

/** The version this checkout develops against, so the install hits the npm cache. */
const devVersion = (name: string) =>
  (JSON.parse(readFileSync(join(repoRoot, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const APP = `
import { z } from 'zod';
import { defineApp, defineJob } from 'workhorse';
export const Hello = defineJob({ type: 'consumer.hello', schema: z.object({ name: z.string() }), timeoutMs: 1000 });
export default defineApp({ jobs: [Hello], configure: (w) => w.handle(Hello, async (p) => 'hello ' + p.name) });
`;

const CHECK = `
import { readdirSync } from 'node:fs';
import { App, Stack } from 'aws-cdk-lib';
import * as workhorse from 'workhorse';
import { WorkhorseTickWorker } from 'workhorse/infra';
import { signRequest } from 'workhorse/signing';
import { Hello } from './app.mjs';

const headers = await signRequest({ secret: ${JSON.stringify(SECRET)}, method: 'POST', path: '/tick', body: '', timestamp: 1700000000 });
const outdir = process.argv[2];
const cdk = new App({ outdir });
const stack = new Stack(cdk, 'Consumer');
new WorkhorseTickWorker(stack, 'Workhorse', { app: './app.mjs', database: { url: 'postgres://app:secret@db.example.com:5432/app' } });
const template = cdk.synth().getStackByName('Consumer').template;
const bundles = readdirSync(outdir).filter((d) => d.startsWith('asset.') && readdirSync(outdir + '/' + d).includes('index.mjs'));
console.log(JSON.stringify({
  schemaVersion: workhorse.SCHEMA_VERSION,
  createClient: typeof workhorse.createClient,
  jobType: Hello.type,
  signature: headers['x-workhorse-signature'],
  functions: Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function').length,
  bundles: bundles.length,
}));
`;

const EMBEDDED = `
import { startEmbeddedPostgres } from 'workhorse';
import pg from 'pg';
const server = await startEmbeddedPostgres({ dataDir: process.argv[2] });
const c = new pg.Client({ connectionString: server.connectionString });
await c.connect();
const r = await c.query('show server_version');
await c.end();
await server.stop();
console.log(JSON.stringify({ version: r.rows[0].server_version }));
`;

// A CommonJS project (npm init's default) requires the package: Node loads
// the ESM build through require() (Node 20.19 and later), the same module
// instances an import gets. Without a require-able export condition this was
// ERR_PACKAGE_PATH_NOT_EXPORTED, 'No "exports" main defined'.
const CJS = `
const workhorse = require('workhorse');
const { signRequest } = require('workhorse/signing');
console.log(JSON.stringify({ createClient: typeof workhorse.createClient, signRequest: typeof signRequest, schemaVersion: workhorse.SCHEMA_VERSION }));
`;

// What a user pastes from the docs: its types come from the shipped .d.ts,
// which import pg's (the transaction client txStep hands the handler).
const TYPED = `
import { z } from 'zod';
import { appWorker, createClient, defineApp, defineJob, Worker } from 'workhorse';
export const SendEmail = defineJob({ type: 'email.send', schema: z.object({ to: z.string(), subject: z.string() }) });
export const app = defineApp({ jobs: [SendEmail], configure: (w) => w.handle(SendEmail, () => 'sent'), schedules: [] });
export const spec = appWorker(app, { concurrency: 4 });
// A key an app does not have (a typo of schedules) does not compile.
// @ts-expect-error
defineApp({ jobs: [SendEmail], configure: () => undefined, schedule: [] });
const client = createClient({ connectionString: 'postgres://localhost/app', jobs: [SendEmail] });
const worker = new Worker(client, { concurrency: 2 });
// As the docs write it, for an app defined without schedules too (its type had no such property).
const bare = defineApp({ jobs: [SendEmail], configure: () => undefined });
export const withSchedules = new Worker(client, { scheduleNamespaces: ['default'], schedules: bare.schedules });
export const sinks = bare.outbox?.sinks;
worker.handle(SendEmail, async (payload, ctx) => {
  await ctx.txStep('record', async (tx) => {
    const r = await tx.query<{ n: number }>('select 1 as n');
    return r.rows[0]?.n ?? 0;
  });
  return { to: payload.to };
});
`;

const TSCONFIG = JSON.stringify({
  compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, skipLibCheck: false, noEmit: true },
  files: ['typed.ts'],
});

let tarball: string;

beforeAll(async () => {
  // As root the embedded server runs as postgres, who must reach the installed binaries.
  chmodSync(work, 0o755);
  await mustRun('npm', ['pack', '--pack-destination', work], repoRoot);
  tarball = join(work, readdirSync(work).find((f) => f.endsWith('.tgz'))!);
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  writeFileSync(join(project, 'app.mjs'), APP);
  writeFileSync(join(project, 'check.mjs'), CHECK);
  writeFileSync(join(project, 'embedded.mjs'), EMBEDDED);
  writeFileSync(join(project, 'commonjs.cjs'), CJS);
  writeFileSync(join(project, 'typed.ts'), TYPED);
  writeFileSync(join(project, 'tsconfig.json'), TSCONFIG);
  const peers = ['aws-cdk-lib', 'constructs', 'esbuild', 'typescript'].map((p) => `${p}@${devVersion(p)}`);
  await mustRun('npm', ['install', tarball, ...peers, '--prefer-offline', '--no-audit', '--no-fund'], project);
}, 300_000);

afterAll(() => {
  rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('holds the compiled code (dist/src, dist/infra, dist/handlers), sql/ and the bin, and no sources', () => {
    const installed = join(project, 'node_modules', 'workhorse');
    for (const f of ['dist/src/index.js', 'dist/src/index.d.ts', 'dist/src/signing/index.js', 'dist/infra/index.js', 'dist/handlers/tick.js']) {
      expect(existsSync(join(installed, f)), f).toBe(true);
    }
    const sqlFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
    expect(sqlFiles(join(installed, 'sql'))).toEqual(sqlFiles(join(repoRoot, 'sql')));
    expect(existsSync(join(installed, 'src'))).toBe(false);
  });

  it('declares zod as a peer, so the project and workhorse share one zod; the CDK packages are optional peers', () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'workhorse', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
      peerDependencies: Record<string, string>;
      peerDependenciesMeta: Record<string, { optional?: boolean }>;
    };
    expect(manifest.peerDependencies.zod).toMatch(/^\^4\./);
    expect(manifest.dependencies.zod).toBeUndefined();
    for (const p of ['aws-cdk-lib', 'constructs', 'esbuild']) expect(manifest.peerDependenciesMeta[p]?.optional, p).toBe(true);
    expect(existsSync(join(project, 'node_modules', 'zod'))).toBe(true);
    expect(existsSync(join(project, 'node_modules', 'workhorse', 'node_modules', 'zod'))).toBe(false);
  });

  it('imports workhorse, workhorse/signing and workhorse/infra from a plain Node ESM script and synthesises the construct', async () => {
    const out = await mustRun(process.execPath, ['check.mjs', join(work, 'cdk.out')], project);
    const result = JSON.parse(out.trim().split('\n').at(-1)!) as Record<string, unknown>;
    const expected = createHmac('sha256', SECRET).update('v1\n1700000000\nPOST\n/tick\n').digest('hex');
    expect(result).toEqual({
      schemaVersion: SCHEMA_VERSION,
      createClient: 'function',
      // defineJob accepted the project's own zod schema.
      jobType: 'consumer.hello',
      signature: `v1=${expected}`,
      // tick, HTTP, migration, and CDK's trigger provider.
      functions: 4,
      // esbuild bundled the three workhorse functions from the installed dist/.
      bundles: 3,
    });
  });

  it('is required from a CommonJS script (workhorse and workhorse/signing)', async () => {
    const out = await mustRun(process.execPath, ['commonjs.cjs'], project);
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ createClient: 'function', signRequest: 'function', schemaVersion: SCHEMA_VERSION });
  });

  it('type-checks a strict TypeScript project against the shipped declarations, pg types included', async () => {
    const manifest = JSON.parse(readFileSync(join(project, 'node_modules', 'workhorse', 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    // The declarations import 'pg'; its types must come with workhorse, not from the user's devDependencies.
    expect(manifest.dependencies['@types/pg']).toBeDefined();
    const r = await run(process.execPath, [join(project, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], project);
    expect(r.out).toBe('');
    expect(r.code).toBe(0);
  });

  it('runs the installed bin: `workhorse migrate` applies the shipped sql/ to a fresh database', async () => {
    const db = await createEmptyDatabase();
    try {
      await mustRun(join(project, 'node_modules', '.bin', 'workhorse'), ['migrate', '--database-url', db.url], project);
      const pool = new pg.Pool({ connectionString: db.url, max: 1 });
      // The database is force-dropped right after: an idle client's late 57P01 is not this test's failure.
      pool.on('error', () => undefined);
      try {
        expect(await readSchemaVersion(pool)).toBe(SCHEMA_VERSION);
      } finally {
        await pool.end();
      }
    } finally {
      await db.drop();
    }
  });

  it('starts the embedded PostgreSQL from the installed binaries', async () => {
    const dataDir = mkdtempSync(join(work, 'pg-'));
    const out = await mustRun(process.execPath, ['embedded.mjs', dataDir], project);
    expect(JSON.parse(out.trim().split('\n').at(-1)!)).toEqual({ version: expect.stringMatching(/^17\./) });
  });
});
