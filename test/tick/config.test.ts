// Bad configuration fails at start with a clear, typed error, and nothing
// is registered: a missing database URL, a heartbeat not shorter than the
// time limit, a malformed cron expression, a missing or wrong app module.
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, defineSchedule, runTick } from '../../src/index.js';
import { loadHttpEnvConfig } from '../../src/config.js';
import app from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureApp, freshHandler, lambdaContext, repoRoot, scheduledEvent } from './support.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db.drop();
});

// The handler is loaded afresh per test (as a new container would be), so its
// error classes are other instances of the same classes: compare by name and code.
function expectConfigError(err: unknown): ConfigError {
  expect(err).toMatchObject({ name: 'ConfigError', code: 'config_invalid' });
  return err as ConfigError;
}

async function registryRows(): Promise<number> {
  return (await db.pool.query('select 1 from workhorse.worker_registry')).rowCount ?? 0;
}

describe('bad tick configuration', () => {
  it('fails without a database URL, naming DATABASE_URL', async () => {
    const handler = await freshHandler({ WORKHORSE_APP: fixtureApp });
    const err = expectConfigError(await handler(scheduledEvent(), lambdaContext(3000)).catch((e: unknown) => e));
    expect(err.message).toMatch(/DATABASE_URL/);
    expect(err.issues[0]?.path).toEqual(['connectionString']);
  });

  it('fails when the heartbeat is not shorter than the time limit', async () => {
    const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp, WORKHORSE_HEARTBEAT_MS: '5000' });
    const err = expectConfigError(await handler(scheduledEvent(), lambdaContext(3000)).catch((e: unknown) => e));
    expect(err.message).toMatch(/heartbeatMs \(5000\) must be shorter than the tick's time limit/);
    expect(await registryRows()).toBe(0);
  });

  it('fails when the time left is not more than the safety margin', async () => {
    const err = expectConfigError(
      await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 500), safetyMarginMs: 1000 }).catch((e: unknown) => e),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.issues[0]?.path).toEqual(['safetyMarginMs']);
    expect(await registryRows()).toBe(0);
  });

  it('says what a deadline that is not a valid Date is (it said "expected date, received Date")', async () => {
    for (const [deadline, message] of [
      [new Date('x'), 'must be a valid date, not an Invalid Date'],
      [Date.now() + 5000, 'must be a Date, not a number (pass new Date(ms))'],
    ] as const) {
      const err = expectConfigError(await runTick({ app, connectionString: db.url, deadline: deadline as Date }).catch((e: unknown) => e));
      expect(err.issues).toContainEqual({ path: ['deadline'], message });
    }
    expect(await registryRows()).toBe(0);
  });

  it('rejects a malformed cron expression at definition', () => {
    const err = expectConfigError(
      (() => {
        try {
          defineSchedule({ name: 'nightly', job: 'x', cron: '0 25 * * *' });
        } catch (e) {
          return e;
        }
      })(),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.issues[0]?.path).toEqual(['cron']);
    expect(err.message).toMatch(/invalid cron expression "0 25 \* \* \*"/);
  });

  it('fails the invocation when the app module has a malformed cron expression', async () => {
    const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: join(repoRoot, 'test', 'fixtures', 'tick-bad-cron-app.ts') });
    const err = expectConfigError(await handler(scheduledEvent(), lambdaContext(3000)).catch((e: unknown) => e));
    expect(err.message).toMatch(/schedule "bad.nightly".*cron/);
    expect(await registryRows()).toBe(0);
  });

  it('fails at start, registering nothing, when a schedule of an app not made by defineApp names a type the app lacks', async () => {
    const plain = { ...app, schedules: [defineSchedule({ name: 'plain.typo', job: 'tick.sleeep', everyMs: 60_000 })] };
    const err = expectConfigError(await runTick({ app: plain, connectionString: db.url, deadline: new Date(Date.now() + 5000) }).catch((e: unknown) => e));
    expect(err.message).toMatch(/^invalid tick options: app: schedule "plain.typo": schedules.0.job: unknown job type "tick.sleeep": it is not among the app.s jobs/);
    expect(await registryRows()).toBe(0);
  });

  it('fails without WORKHORSE_APP, and with a module that is not an app', async () => {
    const noApp = await freshHandler({ DATABASE_URL: db.url });
    await expect(noApp(scheduledEvent(), lambdaContext(3000))).rejects.toThrow(/WORKHORSE_APP is not set/);
    const notApp = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: join(repoRoot, 'test', 'tick', 'support.ts') });
    await expect(notApp(scheduledEvent(), lambdaContext(3000))).rejects.toThrow(/default export must be defineApp/);
    // A path to nothing is the variable's mistake (it was Node's bare "Cannot find module").
    const missing = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: '/nonexistent/app.js' });
    const err = await missing(scheduledEvent(), lambdaContext(3000)).catch((e: unknown) => e);
    // A fresh handler loads its own copy of the modules: the class is named, not compared.
    expect(err).toMatchObject({ name: 'ConfigError', code: 'config_invalid' });
    expect((err as Error).message).toMatch(/^\/nonexistent\/app\.js: no such file \(\/nonexistent\/app\.js\): point WORKHORSE_APP at the compiled module/);
  });

  it('rejects a malformed variable with the variable’s name', async () => {
    const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp, WORKHORSE_MAX_FANOUT: 'lots' });
    const err = expectConfigError(await handler(scheduledEvent(), lambdaContext(3000)).catch((e: unknown) => e));
    expect(err.message).toMatch(/WORKHORSE_MAX_FANOUT/);
  });

  it('rejects a fan-out function name Lambda would refuse at every fan-out', async () => {
    const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp, WORKHORSE_FANOUT_FUNCTION: 'bad name!' });
    const err = expectConfigError(await handler(scheduledEvent(), lambdaContext(3000)).catch((e: unknown) => e));
    expect(err.message).toMatch(/fanoutFunction must be a Lambda function name/);
  });

  it('rejects an event with a malformed generation', async () => {
    const handler = await freshHandler({ DATABASE_URL: db.url, WORKHORSE_APP: fixtureApp });
    await expect(handler({ generation: -1 }, lambdaContext(3000))).rejects.toMatchObject({
      name: 'ValidationError',
      message: expect.stringMatching(/tick event: generation/),
    });
  });
});

describe("the HTTP function's tick settings", () => {
  it('on Lambda: the alert metrics on, as a tick function has them (the alarms read them whichever evaluated), and no fan-out to itself', () => {
    const onLambda = loadHttpEnvConfig({ AWS_LAMBDA_FUNCTION_NAME: 'wh-http' }).tick;
    expect(onLambda.alertMetrics).toBe(true);
    expect(onLambda.fanoutFunction).toBeUndefined();
    expect(loadHttpEnvConfig({ AWS_LAMBDA_FUNCTION_NAME: 'wh-http', WORKHORSE_FANOUT_FUNCTION: 'wh-tick' }).tick.fanoutFunction).toBe('wh-tick');
    expect(loadHttpEnvConfig({}).tick.alertMetrics).toBeUndefined();
  });
});
