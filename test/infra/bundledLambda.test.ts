// The deployable artefact itself: run the synth entry (what `npm run synth`
// runs) in a child process with no AWS credentials and no Docker, then load
// the esbuild bundles it produced and run them against real PostgreSQL: the
// migration function migrates an empty database, the tick function drains
// the example app's jobs, the HTTP function answers a Function URL event.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import exampleApp, { SendWelcomeEmail, SummariseReport } from '../../examples/app.js';
import { createClient, type Client } from '../../src/client/client.js';
import { assertSchemaVersion } from '../../src/db/migrate.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { loadMigrations, orderedSqlFiles } from '../../src/db/sqlFiles.js';
import { createEmptyDatabase } from '../helpers/db.js';

const ROOT = resolve(import.meta.dirname, '../..');
const STACK = 'WorkhorseExample';

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
type Handler = (event: unknown, context: unknown) => Promise<Json>;

/** A Lambda context whose time limit is `ms` from now. */
function lambdaContext(functionName: string, ms: number) {
  const deadline = Date.now() + ms;
  return {
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: `test-${Date.now()}`,
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
    done() {},
    fail() {},
    succeed() {},
  };
}

describe('the synthesised, bundled functions', () => {
  let outdir: string;
  let template: Json;
  let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
  let client: Client | undefined;
  let synthOutput: string;

  /** The asset directory of the function whose logical id contains `part`. */
  function assetDir(part: string): string {
    const ids = Object.keys(template.Resources).filter(
      (id) => id.includes(part) && template.Resources[id].Type === 'AWS::Lambda::Function',
    );
    expect(ids).toHaveLength(1);
    const key: string = template.Resources[ids[0]!].Properties.Code.S3Key;
    return join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
  }

  async function loadHandler(part: string): Promise<Handler> {
    const mod = (await import(pathToFileURL(join(assetDir(part), 'index.mjs')).href)) as { handler: Handler };
    expect(typeof mod.handler).toBe('function');
    return mod.handler;
  }

  beforeAll(async () => {
    outdir = mkdtempSync(join(tmpdir(), 'workhorse-synth-'));
    // No credentials, no region, no Docker: synthesis must not need any of them.
    const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('AWS_') && k !== 'CDK_DEFAULT_ACCOUNT' && k !== 'CDK_DEFAULT_REGION'));
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'infra/app.ts'], {
      cwd: ROOT,
      env: { ...env, CDK_OUTDIR: outdir, PATH: '/usr/bin:/bin' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    synthOutput = `${run.stdout}\n${run.stderr}`;
    expect(run.status, synthOutput).toBe(0);
    template = JSON.parse(readFileSync(join(outdir, `${STACK}.template.json`), 'utf8'));
    db = await createEmptyDatabase();
  });

  afterAll(async () => {
    await client?.close();
    await db?.drop();
    if (outdir) rmSync(outdir, { recursive: true, force: true });
  });

  it('synthesises the example stack offline, bundling every function locally with esbuild', () => {
    expect(synthOutput).toMatch(/Bundling asset WorkhorseExample\/Workhorse\/Tick/);
    expect(synthOutput).not.toMatch(/docker/i);
    const fns = Object.values(template.Resources as Json).filter((r: Json) => r.Type === 'AWS::Lambda::Function');
    expect(fns.length).toBeGreaterThanOrEqual(3);
  });

  it('ships each function as one ES module with the migration files beside it and no node_modules', () => {
    // sql/ORDER and every file it lists: the bootstrap, the numbered migrations, the protocol files.
    const sqlFiles = ['ORDER', ...orderedSqlFiles(join(ROOT, 'sql')).map((f) => f.path)].sort();
    for (const part of ['WorkhorseTick', 'WorkhorseHttp', 'WorkhorseMigrate']) {
      const dir = assetDir(part);
      const files = readdirSync(dir);
      expect(files, part).toContain('index.mjs');
      expect(files, part).not.toContain('node_modules');
      expect((readdirSync(join(dir, 'sql'), { recursive: true }) as string[]).filter((f) => f.includes('.') || f === 'ORDER').sort(), part).toEqual(sqlFiles);
    }
  });

  it('the bundled migration function migrates an empty database to this code’s schema version', async () => {
    process.env.DATABASE_URL = db.url;
    const migrate = await loadHandler('WorkhorseMigrate');
    const result = await migrate({ RequestType: 'Create' }, lambdaContext('migrate', 60_000));
    expect(result.version).toBe(SCHEMA_VERSION);
    expect(result.applied).toEqual(loadMigrations().map((m) => m.version));
    client = createClient({ connectionString: db.url, jobs: exampleApp.jobs });
    await expect(assertSchemaVersion(client.pool)).resolves.toBeUndefined();
  });

  it('the bundled tick function loads and runs one tick that drains the example app’s jobs', async () => {
    expect(client, 'the migration test runs first').toBeDefined();
    const a = await client!.enqueue(SendWelcomeEmail, { to: 'ada@example.com', name: 'Ada' });
    const b = await client!.enqueue(SummariseReport, { reportId: 'r1', lines: ['one two', 'three'] });
    process.env.DATABASE_URL = db.url;
    const tick = await loadHandler('WorkhorseTick');
    const event = { source: 'aws.events', 'detail-type': 'Scheduled Event', detail: {} };
    // 60 s left: both jobs' timeouts (10 s, 20 s) fit, so the tick claims both.
    const summary = await tick(event, lambdaContext('workhorse-tick', 60_000));
    expect(summary).toMatchObject({ claimed: 2, succeeded: 2, failed: 0, retried: 0 });
    const jobA = await client!.getJob(a.id);
    const jobB = await client!.getJob(b.id);
    expect(jobA?.status).toBe('succeeded');
    expect(jobA?.result).toMatchObject({ greeting: 'Welcome, Ada!' });
    expect(jobB?.result).toEqual({ reportId: 'r1', lines: 2, words: 3 });
    const leases = await client!.pool.query('select count(*)::int as n from workhorse.job_runtime');
    expect(leases.rows[0].n).toBe(0);
  });

  it('the bundled HTTP function answers a Function URL health check', async () => {
    process.env.DATABASE_URL = db.url;
    process.env.WORKHORSE_SIGNING_SECRET = 'test-signing-secret-0123456789';
    const http = await loadHandler('WorkhorseHttp');
    const event = {
      version: '2.0',
      routeKey: '$default',
      rawPath: '/healthz',
      rawQueryString: '',
      headers: { host: 'example.lambda-url.us-east-1.on.aws' },
      requestContext: {
        http: { method: 'GET', path: '/healthz', protocol: 'HTTP/1.1', sourceIp: '127.0.0.1', userAgent: 'test' },
        domainName: 'example.lambda-url.us-east-1.on.aws',
        requestId: 'req',
        routeKey: '$default',
        stage: '$default',
        time: new Date().toISOString(),
        timeEpoch: Date.now(),
      },
      isBase64Encoded: false,
    };
    const res = await http(event, lambdaContext('workhorse-http', 10_000));
    expect(res.statusCode, JSON.stringify(res)).toBe(200);
  });
});
