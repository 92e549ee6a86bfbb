// A bad definition fails where it is written: defineJob refuses unknown keys
// (in the definition and in its retry policy), defineApp checks the whole
// app (jobs, configure, schedules, outbox, alerts, no unknown keys, no two
// definitions of one job type), defineSchedule checks the payload by the
// job's schema, and createClient refuses `jobs` entries
// that are not definitions; a connection string that is not a PostgreSQL
// URL (or socket) is refused by createClient, runTick and
// createWorkhorseAdapter, and an undefined one (DATABASE_URL unset) is
// named as such; new Worker refuses queue with queues and a first
// argument that is not a client, client.define a value that is not a
// definition (a hand-made { type, schema } included: only what defineJob
// returns, or a complete copy of it, is one), and enqueue a second
// definition of a registered type. Each is a ConfigError naming the field.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { loadEnvConfig } from '../../src/config.js';
import { createTestDatabase } from '../helpers/db.js';
import { defineApp } from '../../src/app/defineApp.js';
import { createClient } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { ConfigError, ValidationError } from '../../src/errors.js';
import { defineSchedule } from '../../src/schedules/defineSchedule.js';
import { runTick } from '../../src/tick/runTick.js';
import { createWorkhorseAdapter } from '../../src/worker/adapter.js';
import { Worker } from '../../src/worker/worker.js';

function configError(f: () => unknown): ConfigError {
  let thrown: unknown;
  try {
    f();
  } catch (err) {
    thrown = err;
  }
  expect(thrown).toBeInstanceOf(ConfigError);
  return thrown as ConfigError;
}

const Ping = defineJob({ type: 'ping', schema: z.object({}) });
const configure = () => undefined;

describe('defineJob', () => {
  it('refuses an unknown key in the definition or in its retry policy, naming it', () => {
    expect(configError(() => defineJob({ type: 'a', schema: z.any(), timeout: 5000 } as never)).message).toContain('Unrecognized key: "timeout"');
    const retry = configError(() => defineJob({ type: 'a', schema: z.any(), retry: { maxAttemps: 5 } } as never));
    expect(retry.issues[0]!.path).toEqual(['retry']);
    expect(retry.message).toContain('"maxAttemps"');
  });
});

describe('defineApp', () => {
  it('accepts a well-formed app and returns it unchanged', () => {
    const app = { jobs: [Ping, Ping], configure, schedules: [defineSchedule({ name: 'ping.often', job: Ping, everyMs: 60_000 })] };
    expect(defineApp(app)).toBe(app);
  });

  it.each([
    ['not an object', null, []],
    ['jobs not an array', { jobs: 'ping', configure }, ['jobs']],
    ['a job that is not a definition', { jobs: [{ type: 'ping' }], configure }, ['jobs', 0]],
    ['no configure', { jobs: [Ping] }, ['configure']],
    ['a misspelt key', { jobs: [Ping], configure, schedule: [] }, []],
    ['a schedule that is not a definition', { jobs: [Ping], configure, schedules: [{ name: 'x' }] }, ['schedules', 0]],
    ['a bad outbox', { jobs: [Ping], configure, outbox: { sinks: 'webhook' } }, ['outbox', 'sinks']],
    ['a bad alerts rule', { jobs: [Ping], configure, alerts: { rules: { nope: {} } } }, ['alerts', 'rules']],
    ['two definitions of one type', { jobs: [Ping, defineJob({ type: 'ping', schema: z.any() })], configure }, ['jobs', 1]],
  ])('refuses %s with a ConfigError naming the field', (_what, app, path) => {
    const err = configError(() => defineApp(app as never));
    expect(err.message).toMatch(/^invalid app: /);
    expect(err.issues[0]!.path).toEqual(path);
  });

  it('createClient refuses two different definitions of one type with a ConfigError, as defineApp does', () => {
    const err = configError(() => createClient({ connectionString: 'postgres://x@127.0.0.1/db', jobs: [Ping, defineJob({ type: 'ping', schema: z.any() })] }));
    expect(err.message).toMatch(/two different job definitions are named "ping"/);
  });

  it('refuses two different schedules of one name', () => {
    const a = defineSchedule({ name: 'ping.often', job: Ping, everyMs: 60_000 });
    const b = defineSchedule({ name: 'ping.often', job: Ping, everyMs: 5_000 });
    expect(configError(() => defineApp({ jobs: [Ping], configure, schedules: [a, b] })).issues[0]!.path).toEqual(['schedules', 1]);
  });
});

describe('defineSchedule', () => {
  it('checks the payload by the job definition\'s schema when it is defined (it was refused only when the slot was stored: at every tick\'s start)', () => {
    const Report = defineJob({ type: 'report.build', schema: z.object({ scope: z.string() }) });
    // @ts-expect-error a wrong payload does not compile; a JavaScript caller gets the ConfigError
    const bad = configError(() => defineSchedule({ name: 'report.nightly', job: Report, payload: { scope: 1 }, everyMs: 60_000 }));
    expect(bad.issues[0]!.path).toEqual(['payload', 'scope']);
    expect(bad.message).toContain('invalid schedule "report.nightly": payload.scope');
    expect(configError(() => defineSchedule({ name: 'report.nightly', job: Report, everyMs: 60_000 })).issues[0]!.path).toEqual(['payload', 'scope']);
    expect(defineSchedule({ name: 'report.nightly', job: Report, payload: { scope: 'all' }, everyMs: 60_000 }).payload).toEqual({ scope: 'all' });
    expect(defineSchedule({ name: 'report.typed', job: 'report.build', payload: { scope: 1 }, everyMs: 60_000 }).job).toBe('report.build');
  });
});

describe('createClient', () => {
  it('refuses jobs entries that are not definitions', () => {
    const err = configError(() => createClient({ connectionString: 'postgres://127.0.0.1/x', jobs: [{ type: 1, schema: 2 }] as never }));
    expect(err.issues[0]!.path).toEqual(['jobs', 0]);
  });
});

describe('connection strings', () => {
  it.each(['garbage', 'localhost:5432', 'mysql://u@h/db', 'postgres://h:99999/db', 'socket:', 'socket:?db=app'])('createClient, runTick and createWorkhorseAdapter refuse %j with a ConfigError', async (connectionString) => {
    const client = configError(() => createClient({ connectionString }));
    expect(client.issues[0]!.path).toEqual(['connectionString']);
    expect(client.message).toContain('not a valid PostgreSQL URL');
    configError(() => createWorkhorseAdapter({ connectionString, jobs: [] }));
    const tick = await runTick({ app: defineApp({ jobs: [], configure }), connectionString, deadline: new Date(Date.now() + 5000) }).catch((e: unknown) => e);
    expect(tick).toBeInstanceOf(ConfigError);
  });

  it("accepts libpq's socket form with a user (postgres://user@/db?host=/dir), and refuses it without a socket directory", async () => {
    const client = createClient({ connectionString: 'postgres://app@/orders?host=/run/postgresql' });
    await client.close();
    for (const bad of ['postgres://app@/orders', 'postgres://app@/orders?host=db.internal']) {
      expect(configError(() => createClient({ connectionString: bad })).message).toContain('not a valid PostgreSQL URL');
    }
  });

  it('createClient and createWorkhorseAdapter say an undefined connectionString is undefined (DATABASE_URL unset), not "give exactly one"', () => {
    const unset: string | undefined = undefined;
    for (const err of [configError(() => createClient({ connectionString: unset })), configError(() => createWorkhorseAdapter({ connectionString: unset, jobs: [] }))]) {
      expect(err.issues[0]!.path).toEqual(['connectionString']);
      expect(err.message).toContain('connectionString is undefined');
      expect(err.message).toContain('DATABASE_URL');
    }
    expect(configError(() => createClient({})).message).toContain('give exactly one of connectionString or pool');
  });

  it('say an empty connectionString (DATABASE_URL= in an env file) is empty, once, not also "undefined" and "not a valid PostgreSQL URL"', async () => {
    const errs = [configError(() => createClient({ connectionString: '' })), configError(() => createWorkhorseAdapter({ connectionString: '', jobs: [] }))];
    const tick = await runTick({ app: defineApp({ jobs: [], configure }), connectionString: '', deadline: new Date(Date.now() + 5000) }).catch((e: unknown) => e);
    expect(tick).toBeInstanceOf(ConfigError);
    for (const err of [...errs, tick as ConfigError]) {
      expect(err.issues).toEqual([{ path: ['connectionString'], message: 'connectionString is empty (is DATABASE_URL set to nothing?)' }]);
    }
  });

  it('refuse an sslmode the driver does not know, by name, instead of turning SSL on for it', async () => {
    const connectionString = 'postgres://u@127.0.0.1:5432/db?sslmode=requried';
    const err = configError(() => createClient({ connectionString }));
    expect(err.issues).toEqual([{ path: ['connectionString'], message: expect.stringMatching(/^sslmode "requried" is not one of disable, allow, prefer, require, verify-ca, verify-full, no-verify$/) }]);
    configError(() => createWorkhorseAdapter({ connectionString, jobs: [] }));
    expect(await runTick({ app: defineApp({ jobs: [], configure }), connectionString, deadline: new Date(Date.now() + 5000) }).catch((e: unknown) => e)).toBeInstanceOf(ConfigError);
  });

  it('refuse a certificate or key file that cannot be read, by name, where the driver met it only at the first connect (a bare ENOENT)', () => {
    const connectionString = 'postgres://u@127.0.0.1:5432/db?sslmode=require&sslcert=/nonexistent/client.crt&sslrootcert=/nonexistent/root.crt';
    const err = configError(() => createClient({ connectionString }));
    expect(err.issues).toEqual([
      { path: ['connectionString'], message: 'sslcert "/nonexistent/client.crt" cannot be read (ENOENT)' },
      { path: ['connectionString'], message: 'sslrootcert "/nonexistent/root.crt" cannot be read (ENOENT)' },
    ]);
    configError(() => createWorkhorseAdapter({ connectionString, jobs: [] }));
    // A directory is readable, and no certificate: the driver failed with EISDIR at each connect.
    expect(configError(() => createClient({ connectionString: 'postgres://u@127.0.0.1:5432/db?sslrootcert=/tmp' })).issues).toEqual([
      { path: ['connectionString'], message: 'sslrootcert "/tmp" is not a file (a certificate or key file in PEM form)' },
    ]);
  });

  it('refuse a replication session, whose walsender runs no statement with parameters (every call failed while /healthz said 200)', () => {
    for (const value of ['database', 'true', 'on']) {
      const connectionString = `postgres://u@127.0.0.1:5432/db?replication=${value}`;
      expect(configError(() => createClient({ connectionString })).issues).toEqual([
        { path: ['connectionString'], message: `replication=${value} opens a replication (walsender) session, which cannot run workhorse's statements: remove it` },
      ]);
      configError(() => createWorkhorseAdapter({ connectionString, jobs: [] }));
    }
    // An ordinary session asked for by name is one.
    for (const ordinary of ['false', 'off', 'no', '0', '', 'f', 'of']) {
      expect(() => createClient({ connectionString: `postgres://u@127.0.0.1:5432/db?replication=${ordinary}` }).close(), ordinary).not.toThrow();
    }
  });

  it('trims spaces and newlines around one (the driver read " postgres://..." as a socket path and connected to a host named "base")', async () => {
    const db = await createTestDatabase();
    try {
      const client = createClient({ connectionString: `  ${db.url}\n`, jobs: [] });
      try {
        expect(await client.getJob('1')).toBeNull();
      } finally {
        await client.close();
      }
      expect(loadEnvConfig({ DATABASE_URL: ` ${db.url} ` }).databaseUrl).toBe(db.url);
      expect(configError(() => createClient({ connectionString: ' \n ' })).message).toContain('connectionString is empty');
    } finally {
      await db.drop();
    }
  });

  it.each(['postgres://u@127.0.0.1:5432/db', 'postgresql://h/db', 'postgres://h/db?sslmode=verify-full', 'postgres://h/db?sslmode=no-verify', 'socket:/run/postgresql?db=app', '/run/postgresql app'])('accepts %j', async (connectionString) => {
    const client = createClient({ connectionString });
    await client.close();
  });
});

describe('new Worker', () => {
  it('refuses queue and queues together, and a first argument that is not a client', async () => {
    const client = createClient({ connectionString: 'postgres://u@127.0.0.1:5432/db' });
    try {
      // @ts-expect-error refused by the type as by the runtime
      const both = configError(() => new Worker(client, { queue: 'a', queues: ['b'] }));
      expect(both.issues[0]!.path).toEqual(['queue']);
      expect(configError(() => new Worker({} as never)).message).toContain('createClient()');
      expect(new Worker(client, { queue: 'a' }).options.queues).toEqual(['a']);
    } finally {
      await client.close();
    }
  });
});

describe('a hand-made { type, schema }', () => {
  const lookAlike = { type: 'look', schema: z.object({ a: z.number() }) };

  it('is not a definition anywhere one is taken (it passed every check, then failed the first enqueue with a TypeError)', async () => {
    expect(configError(() => createClient({ connectionString: 'postgres://127.0.0.1/x', jobs: [lookAlike] as never })).issues[0]!.path).toEqual(['jobs', 0]);
    expect(configError(() => defineApp({ jobs: [lookAlike] as never, configure })).issues[0]!.path).toEqual(['jobs', 0]);
    configError(() => defineSchedule({ name: 's', everyMs: 60_000, job: lookAlike as never }));
    const client = createClient({ connectionString: 'postgres://u@127.0.0.1:5432/db' });
    try {
      configError(() => client.define(lookAlike as never));
      const worker = new Worker(client, { queue: 'a' });
      expect(() => worker.handle(lookAlike as never, async () => null)).toThrow(/defineJob\(\) definition/);
      const enqueued = await client.enqueue(lookAlike as never, { a: 1 } as never).catch((e: unknown) => e);
      expect(enqueued).toBeInstanceOf(ValidationError);
      expect((enqueued as ValidationError).message).toContain('defineJob() definition');
    } finally {
      await client.close();
    }
  });

  it('a complete copy of a definition (a spread with another queue) still is one', async () => {
    const copy = { ...Ping, type: 'ping.copy', queue: 'elsewhere' };
    const client = createClient({ connectionString: 'postgres://u@127.0.0.1:5432/db', jobs: [copy] });
    try {
      expect(client.definition('ping.copy').queue).toBe('elsewhere');
    } finally {
      await client.close();
    }
  });
});

describe('enqueue with another definition of a registered type', () => {
  it('is a ConfigError, as at createClient, not a job stored with the other queue and retry policy', async () => {
    const client = createClient({ connectionString: 'postgres://u@127.0.0.1:5432/db', jobs: [Ping] });
    try {
      const other = defineJob({ type: 'ping', schema: z.object({}), queue: 'other-q', retry: { maxAttempts: 1 } });
      const err = await client.enqueue(other, {}).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toContain('two different job definitions are named "ping"');
    } finally {
      await client.close();
    }
  });
});

describe('worker.handle with another definition of a registered type', () => {
  it('is a ConfigError when the handler is added: every job of the type failed on its first attempt with a schema mismatch', async () => {
    const client = createClient({ connectionString: 'postgres://u@127.0.0.1:5432/db', jobs: [Ping] });
    try {
      const other = defineJob({ type: 'ping', schema: z.object({ n: z.number() }) });
      const worker = new Worker(client, { listen: false });
      expect(() => worker.handle(other, async () => undefined)).toThrow(ConfigError);
      expect(() => worker.handle(other, async () => undefined)).toThrow(/two different job definitions are named "ping"/);
      // The client's own definition, and the type by name, are fine.
      worker.handle(Ping, async () => undefined);
    } finally {
      await client.close();
    }
  });
});

describe('client.define', () => {
  it('refuses what is not a definition (define({}) used to register the type undefined)', async () => {
    const client = createClient({ connectionString: 'postgres://u@127.0.0.1:5432/db' });
    try {
      for (const bad of [{}, null, { type: 'x' }, 'ping']) configError(() => client.define(bad as never));
      expect(client.definedTypes).toEqual([]);
      expect(client.define(Ping).definedTypes).toEqual(['ping']);
    } finally {
      await client.close();
    }
  });
});
