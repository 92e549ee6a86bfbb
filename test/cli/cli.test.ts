// The `workhorse` command line, run as a real child process: every command
// answers --help with its usage and exit 0; --version, help and --help
// refuse an argument they do not take (exit 2); bad arguments, a bad
// environment or a missing module are one line and exit 2; runtime failures
// (no database, an unmigrated schema) are one line and exit 1; never a stack
// unless --verbose, never the prefix twice. `serve` starts without a
// database and answers /healthz 503 until it has one; a --host it cannot
// bind is a bad flag (exit 2), a port in use a runtime failure (exit 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaVersionError } from '../../src/errors.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { commands } from '../../src/cli/main.js';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createEmptyDatabase, createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { BIN, cliEnv, compiledCli, ROOT, runCli, startCli, type CliRun, type CompiledCli } from './support/runCli.js';

const APP = 'test/fixtures/tick-app.ts';
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';
const STACK_LINE = /^\s+at /m;

/** A failure: one line on stderr with the command's prefix once, nothing on stdout, no stack. */
function expectOneLine(r: CliRun, command: string, code: number, message: RegExp): void {
  expect(r.code, r.stderr).toBe(code);
  expect(r.stdout).toBe('');
  const lines = r.stderr.trimEnd().split('\n');
  expect(lines, r.stderr).toHaveLength(1);
  expect(lines[0]).toMatch(new RegExp(`^workhorse ${command}: `));
  expect(lines[0]).not.toMatch(new RegExp(`workhorse ${command}: workhorse ${command}:`));
  expect(lines[0]).toMatch(message);
  expect(r.stderr).not.toMatch(STACK_LINE);
}

let empty: Awaited<ReturnType<typeof createEmptyDatabase>>;

beforeAll(async () => {
  empty = await createEmptyDatabase();
});

afterAll(async () => {
  await empty.drop();
});

describe('--help', () => {
  it.each(commands.map((c) => c.name))('workhorse %s --help prints its usage and exits 0', async (name) => {
    const r = await runCli([name, '--help'], cliEnv({ DATABASE_URL: 'not-a-url' }));
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(new RegExp(`^usage: workhorse ${name}`));
  });

  it('workhorse --help lists every command; workhorse help tick is tick --help; no command at all is exit 2', async () => {
    const all = await runCli(['--help']);
    expect(all.code).toBe(0);
    for (const c of commands) expect(all.stdout).toContain(c.usage);
    const tick = await runCli(['help', 'tick']);
    expect(tick.code).toBe(0);
    expect(tick.stdout).toBe((await runCli(['tick', '-h'])).stdout);
    expect((await runCli([])).code).toBe(2);
  });

  it('workhorse --version (or -V) prints the package version and exits 0', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    for (const flag of ['--version', '-V']) {
      const r = await runCli([flag]);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toBe(`workhorse ${version}\n`);
    }
  });

  it.each([
    [['--version', 'extra'], /^workhorse --version: unexpected argument "extra"/],
    [['-V', 'a', 'b'], /^workhorse -V: unexpected arguments "a", "b"/],
    [['--version', '--bogus'], /^workhorse --version: unexpected argument "--bogus"/],
    [['help', 'bogus'], /^workhorse: unknown command "bogus"/],
    [['--help', 'extra'], /^workhorse: unknown command "extra"/],
    [['help', 'migrate', 'extra'], /^workhorse help: unexpected argument "extra"/],
    [['--help', '--help'], /^workhorse --help: unexpected argument "--help"/],
    [['help', '-x', 'migrate'], /^workhorse help: unexpected arguments "-x", "migrate"/],
    [['migrate', '--help', 'extra'], /^workhorse migrate --help: unexpected argument "extra"/],
    [['tick', 'app.js', '--help'], /^workhorse tick --help: unexpected argument "app\.js"/],
    [['worker', '-h', 'a.js', 'b.js'], /^workhorse worker --help: unexpected arguments "a\.js", "b\.js"/],
    [['serve', '--help', '--port', '8080'], /^workhorse serve --help: unexpected arguments "--port", "8080"/],
  ])('workhorse %j refuses what it does not take: one line, exit 2, nothing on stdout', async (args, message) => {
    const r = await runCli(args);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(STACK_LINE);
  });

  it('workhorse --help migrate is migrate --help', async () => {
    const r = await runCli(['--help', 'migrate']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe((await runCli(['migrate', '--help'])).stdout);
  });
});

describe('usage and configuration problems: one line, exit 2', () => {
  it.each([
    ['migrate', ['migrate', 'extra-arg'], /unexpected argument "extra-arg" \(usage: workhorse migrate/],
    ['demo', ['demo', 'now'], /unexpected argument "now"/],
    ['worker', ['worker'], /missing <module\.js>/],
    ['worker', ['worker', 'a.js', 'b.js'], /unexpected argument "b\.js"/],
    ['tick', ['tick', APP, 'extra'], /unexpected argument "extra"/],
    ['tick', ['tick', '--bogus'], /unknown option '--bogus'/],
    // A negative id read as a short option ("unknown option '-1'").
    ['jobs', ['jobs', 'show', '-1'], /"-1" is a negative number, which no argument takes \(ids and counts are whole numbers from 1\)/],
    ['tick', ['tick', APP, '--budget-ms', 'soon', '--database-url', NO_DATABASE], /--budget-ms: expected a whole number of milliseconds/],
    ['tick', ['tick', APP, '--budget-ms', '1e4', '--database-url', NO_DATABASE], /--budget-ms: expected a whole number of milliseconds/],
    ['tick', ['tick', APP, '--concurrency', '0', '--database-url', NO_DATABASE], /--concurrency: must be at least 1/],
    ['tick', ['tick', APP, '--concurrency', '-1', '--database-url', NO_DATABASE], /option '--concurrency' is followed by a value starting with "-": write it as --concurrency=<value>/],
    ['serve', ['serve', '--port', '-1'], /option '--port' is followed by a value starting with "-": write it as --port=<value>/],
    ['tick', ['tick', 'missing-app.js', '--database-url', NO_DATABASE], /app module "missing-app\.js" not found/],
    ['worker', ['worker', 'missing-worker.js'], /worker module "missing-worker\.js" not found/],
    // An app module, the likeliest mistake: told how to wrap it.
    ['worker', ['worker', 'test/http/fixtures/app.ts'], /the default export must be defineWorkerProcess\(\{ client \(or adapter\), workers \}\): it is a defineApp\(\) app; .*appWorker\(app\)/],
    ['serve', ['serve', '--app', 'missing-app.js'], /--app "missing-app\.js" not found/],
    ['tick', ['tick', 'test', '--database-url', NO_DATABASE], /app module "test" is a directory: name the module file/],
    ['worker', ['worker', 'test'], /worker module "test" is a directory: name the module file/],
    // An empty argument resolved to the working directory: "worker module "" is a directory".
    ['worker', ['worker', ''], /worker module is an empty path: name the module file/],
    // One message, not "Too small: ...; --database-url: not a valid PostgreSQL URL".
    ['migrate', ['migrate', '--database-url', ''], /^workhorse migrate: --database-url: is empty \(usage/],
    // A module that is not an app is named as given, not as the file URL it was loaded from.
    ['tick', ['tick', 'test/fixtures/emailJob.ts', '--database-url', NO_DATABASE], /^workhorse tick: test\/fixtures\/emailJob\.ts: the default export must be defineApp/],
    ['serve', ['serve', '--app', 'test/fixtures/emailJob.ts'], /^workhorse serve: test\/fixtures\/emailJob\.ts: the default export must be defineApp/],
    ['serve', ['serve', '--port', 'eighty'], /--port: expected a port number from 0 to 65535/],
    ['serve', ['serve', '--port=-1'], /--port: expected a port number from 0 to 65535/],
    ['serve', ['serve', '--port', '65536'], /--port: expected a port number from 0 to 65535/],
    // A repeatable flag is named alone, not as "--queue.0".
    ['tick', ['tick', APP, '--queue', '%ZZ', '--database-url', NO_DATABASE], /^workhorse tick: --queue: a queue name/],
    ['serve', ['serve', '--port', '8080', '--port', '8081'], /option '--port' is given more than once: give it once/],
    ['tick', ['tick', APP, '--budget-ms=100', '--budget-ms', '200', '--database-url', NO_DATABASE], /option '--budget-ms' is given more than once/],
    ['migrate', ['migrate', '--database-url', 'not-a-url'], /--database-url: not a valid PostgreSQL URL/],
    ['migrate', ['migrate', '--database-url', 'postgres://u@127.0.0.1:1/db?sslmode=bogus'], /--database-url: sslmode "bogus" is not one of disable, allow, prefer/],
    ['tick', ['tick', 'test/fixtures/typo-job-app.ts', '--database-url', NO_DATABASE], /invalid job definition "typo\.report": \(root\): Unrecognized key: "timeout"/],
    ['tick', ['tick', 'test/fixtures/typo-app.ts', '--database-url', NO_DATABASE], /invalid app: \(root\): Unrecognized key: "schedule"/],
    ['serve', ['serve', '--app', 'test/fixtures/typo-app.ts'], /invalid app: \(root\): Unrecognized key: "schedule"/],
  ])('workhorse %s: %j', async (command, args, message) => {
    expectOneLine(await runCli(args), command, 2, message);
  });

  it('says DATABASE_URL=not-a-url is not a valid URL instead of failing a DNS lookup', async () => {
    for (const command of ['migrate', 'tick', 'serve']) {
      const r = await runCli(command === 'tick' ? [command, APP] : [command], cliEnv({ DATABASE_URL: 'not-a-url' }));
      expectOneLine(r, command, 2, /DATABASE_URL: not a valid PostgreSQL URL/);
      expect(r.stderr).not.toMatch(/getaddrinfo|ENOTFOUND/);
    }
  });

  it('serve refuses a bad tick variable at start-up instead of answering every POST /tick with a 500', async () => {
    const r = await runCli(['serve', '--port', '0'], cliEnv({ DATABASE_URL: NO_DATABASE, WORKHORSE_CONCURRENCY: '0' }), BIN, 15_000);
    expectOneLine(r, 'serve', 2, /invalid tick options: concurrency: Too small/);
  });

  it('names the missing database setting', async () => {
    expectOneLine(await runCli(['migrate']), 'migrate', 2, /set DATABASE_URL or pass --database-url/);
    expectOneLine(await runCli(['tick', APP]), 'tick', 2, /set DATABASE_URL or pass --database-url/);
  });
});

/** A TCP server that is not PostgreSQL: it accepts and never answers, or hangs up at once. */
async function notPostgres(behaviour: 'silent' | 'hang-up'): Promise<{ url: string; close: () => void }> {
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    if (behaviour === 'hang-up') socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `postgres://nobody@127.0.0.1:${port}/none`,
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe('a DATABASE_URL that is not a PostgreSQL server: one line, exit 1, never a hang', () => {
  it.each([
    ['silent', ['migrate'], 20_000],
    ['silent', ['tick', APP, '--budget-ms', '2000'], 10_000],
    ['hang-up', ['migrate'], 10_000],
    ['hang-up', ['tick', APP], 10_000],
  ] as const)('a server that is %s: workhorse %j', async (behaviour, args, within) => {
    const fake = await notPostgres(behaviour);
    try {
      const r = await runCli([...args], cliEnv({ DATABASE_URL: fake.url }), BIN, within);
      // A hang-up reads as a closed connection, or as a reset when the client's
      // start-up packet was already in the server's buffer (load decides which).
      expectOneLine(r, args[0], 1, /^workhorse \w+: cannot reach the database: (Connection terminated|read ECONNRESET)/);
    } finally {
      fake.close();
    }
  });
});

describe('runtime failures: one line, exit 1', () => {
  it('a database that refuses connections', async () => {
    expectOneLine(await runCli(['migrate', '--database-url', NO_DATABASE]), 'migrate', 1, /cannot reach the database: connect ECONNREFUSED 127\.0\.0\.1:1/);
  });

  it('--verbose adds the stack, and only then', async () => {
    const r = await runCli(['migrate', '--database-url', NO_DATABASE, '--verbose']);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toMatch(/^workhorse migrate: cannot reach the database/);
    expect(r.stderr).toMatch(STACK_LINE);
  });

  it("--verbose shows where in the user's module it broke (the cause under the load failure), not only the CLI's frames", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'wh-verbose-'));
    writeFileSync(join(dir, 'syntax.mjs'), 'export const a = 1;\nexport const b = 2;\nthis is not js(\n');
    writeFileSync(join(dir, 'throws.mjs'), "export const a = 1;\nthrow new Error('boom at import');\n");
    const syntax = await runCli(['--verbose', 'tick', join(dir, 'syntax.mjs'), '--database-url', NO_DATABASE]);
    expect(syntax.code).toBe(1);
    // Node's own loader says "Unexpected identifier"; from a checkout, TypeScript's loader names the line in the message itself.
    // Node's SyntaxError names no line: the message says how to see it.
    expect(syntax.stderr.split('\n')[0]).toMatch(/^workhorse tick: could not load .*syntax\.mjs: Unexpected identifier 'is' \(a syntax error: `node --check .*syntax\.mjs` shows the file and line\)$/);
    expect(syntax.stderr).toMatch(/\ncaused by: SyntaxError: Unexpected identifier 'is'\n/);
    const throws = await runCli(['--verbose', 'tick', join(dir, 'throws.mjs'), '--database-url', NO_DATABASE]);
    expect(throws.code).toBe(1);
    expect(throws.stderr).toMatch(/caused by: Error: boom at import\n\s+at .*throws\.mjs:2:7/);
    // Without --verbose: the one line.
    expect((await runCli(['tick', join(dir, 'throws.mjs'), '--database-url', NO_DATABASE])).stderr).not.toMatch(/caused by/);
  });

  it('tick on an unmigrated database gives the SchemaVersionError every command gives', async () => {
    const expected = new SchemaVersionError(null, SCHEMA_VERSION).message;
    const tick = await runCli(['tick', APP, '--database-url', empty.url]);
    expectOneLine(tick, 'tick', 1, /schema not found/);
    expect(tick.stderr.trim()).toBe(`workhorse tick: ${expected}`);
    const serve = await runCli(['serve', '--port', '0'], cliEnv({ DATABASE_URL: empty.url }));
    expect(serve.code).toBe(1);
    expect(serve.stderr.trim().split('\n').at(-1)).toBe(`workhorse serve: ${expected}`);
  });
});

describe('a TypeScript app module without a TypeScript loader', () => {
  let compiled: CompiledCli;

  beforeAll(async () => {
    compiled = await compiledCli();
  }, 60_000);

  afterAll(() => compiled?.remove());

  it('says the CLI needs compiled JavaScript and how to get it', async () => {
    const r = await runCli(['tick', `${ROOT}${APP}`, '--database-url', NO_DATABASE], cliEnv(), compiled.bin);
    expectOneLine(r, 'tick', 2, /is TypeScript, and the CLI loads compiled JavaScript: compile it first \(for example `npx tsc`\) and pass the \.js file/);
    const serve = await runCli(['serve', '--app', `${ROOT}${APP}`], cliEnv({ DATABASE_URL: NO_DATABASE }), compiled.bin);
    expectOneLine(serve, 'serve', 2, /is TypeScript/);
  });

  it('workhorse --version reads the installed package.json', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const r = await runCli(['--version'], cliEnv(), compiled.bin);
    expect(r.stdout).toBe(`workhorse ${version}\n`);
  });
});

describe('workhorse serve without a database', () => {
  it('starts, answers /healthz 503 database_unreachable, and exits 0 on SIGTERM', async () => {
    const child = startCli(['serve', '--port', '0'], cliEnv({ DATABASE_URL: NO_DATABASE, WORKHORSE_API_TOKEN: 'serve-token-0123456789abcdef' }));
    let output = '';
    child.stdout!.on('data', (d) => (output += String(d)));
    child.stderr!.on('data', (d) => (output += String(d)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 30_000);
        void exited.then((code) => reject(new Error(`serve exited with ${code}:\n${output}`)));
        const check = () => {
          const m = /listening on (http:\/\/\S+)/.exec(output);
          if (m) {
            clearTimeout(timer);
            resolve(m[1]!);
          } else setTimeout(check, 50);
        };
        check();
      });
      expect(output).toMatch(/workhorse serve: cannot reach the database: .*ECONNREFUSED.*; serving anyway/);
      const health = await fetch(`${url}/healthz`);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ error: { code: 'database_unreachable', message: 'the database did not answer' } });
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(output).not.toMatch(STACK_LINE);
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

describe('workhorse serve that cannot listen', () => {
  const env = () => cliEnv({ DATABASE_URL: migrated.url, WORKHORSE_API_TOKEN: 'serve-token-0123456789abcdef', WORKHORSE_SIGNING_SECRET: 'serve-secret-0123456789abcdef' });
  /** The failure is the last line (and the only one: serve notes a dashboard without sign-in only once it listens); exit code and no stack as usual. */
  const lastLine = (r: CliRun, code: number, message: RegExp) => {
    expect(r.code, r.stderr).toBe(code);
    expect(r.stderr).not.toMatch(STACK_LINE);
    const line = r.stderr.trimEnd().split('\n').at(-1)!;
    expect(line).toMatch(/^workhorse serve: /);
    expect(line).toMatch(message);
    return line;
  };
  let migrated: TestDatabase;
  beforeAll(async () => {
    migrated = await createTestDatabase();
  });
  afterAll(async () => {
    await migrated.drop();
  });

  it.each([['no-such-host.invalid'], ['not a host'], ['192.0.2.1']])('--host %j is a bad flag value naming the host, exit 2, not a database failure', async (host) => {
    const r = await runCli(['serve', '--host', host, '--port', '0'], env());
    const line = lastLine(r, 2, new RegExp(`--host "${host.replace(/\./g, '\\.')}" is not an address of this machine \\(cannot listen on `));
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(line).not.toMatch(/database/);
  });

  it('demo --ui --host of another machine is the same bad flag value, exit 2 (it was exit 1)', async () => {
    const r = await runCli(['demo', '--ui', '--host', '192.0.2.1', '--port', '0'], cliEnv({ DATABASE_URL: migrated.url }), undefined, 30_000);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split('\n').at(-1)).toMatch(/^workhorse demo: --host "192\.0\.2\.1" is not an address of this machine \(cannot listen on /);
  });

  it('a port in use names the address, exit 1', async () => {
    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    const { port } = busy.address() as AddressInfo;
    try {
      const r = await runCli(['serve', '--host', '127.0.0.1', '--port', String(port)], env());
      lastLine(r, 1, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${port}: listen EADDRINUSE`));
      // The one line: the notices about missing secrets come only once it listens.
      expect(r.stderr.trim().split('\n')).toHaveLength(1);
    } finally {
      busy.close();
    }
  });
});

describe('workhorse demo with a data directory it cannot create', () => {
  // Node's recursive mkdir spins forever on these (ENOENT with an existing parent).
  it.each([['under /proc', () => '/proc/no-such-dir/pg'], ['below a dangling symlink', () => dangling()]])('%s: one line naming it, exit 1, at once', async (_what, dir) => {
    const dataDir = dir();
    const r = await runCli(['demo'], cliEnv({ WORKHORSE_DATA_DIR: dataDir }), BIN, 20_000);
    expect(r.code, r.stderr).toBe(1);
    expect(r.stdout).toContain(`first run: initialising ${dataDir}`);
    expect(r.stderr.trim().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/^workhorse demo: cannot create the directory \//);
    expect(r.stderr).not.toMatch(STACK_LINE);
  });
});

function dangling(): string {
  const dir = mkdtempSync(join(tmpdir(), 'workhorse-dangling-'));
  symlinkSync(join(dir, 'missing-target'), join(dir, 'link'));
  return join(dir, 'link', 'pg');
}
