// A Worker (and a ScheduleRunner) checks the schedules it is given when it
// is built, as defineApp does: two different schedules of one name (whose
// slots one upsert cannot store: PostgreSQL refuses it with 21000, and the
// runner retried that for ever while no schedule fired), a schedule of a job
// type its client does not have, or a payload that job's schema refuses is
// a ConfigError naming the schedule. `workhorse worker` then exits 2 before
// it says its workers run.
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createClient, defineSchedule, defineWorkerProcess, ScheduleRunner, Worker, type Client } from '../../src/index.js';
import { SendEmail } from '../fixtures/emailJob.js';
import { cliEnv, runCli } from '../cli/support/runCli.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const FIXTURE = fileURLToPath(new URL('../fixtures/badScheduleWorkerProcess.ts', import.meta.url));

const a = defineSchedule({ name: 'fx.nightly', job: SendEmail, payload: { to: 'a@example.com' }, everyMs: 60_000 });
const b = defineSchedule({ name: 'fx.nightly', job: SendEmail, payload: { to: 'b@example.com' }, everyMs: 60_000 });

function refusal(build: () => unknown): ConfigError {
  try {
    build();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error('accepted');
}

describe('the schedules a worker is given', () => {
  const client = createClient({ connectionString: 'postgres://nobody@127.0.0.1:1/none', jobs: [SendEmail] });
  afterAll(() => client.close());

  it('refuses two different schedules of one name, in a Worker, a ScheduleRunner and defineWorkerProcess', () => {
    const options = { scheduleNamespaces: ['default'], schedules: [a, b] };
    for (const build of [
      () => new Worker(client, options),
      () => new ScheduleRunner(client, options),
      () => defineWorkerProcess({ client: () => client, workers: [{ options, configure: () => undefined }] }),
    ]) {
      const err = refusal(build);
      expect(err.message).toContain('two different schedules are named "fx.nightly"');
      expect(err.issues[0]!.path.slice(-2)).toEqual(['schedules', 1]);
    }
  });

  it('accepts one schedule given twice', () => {
    expect(() => new Worker(client, { scheduleNamespaces: ['default'], schedules: [a, a] })).not.toThrow();
  });

  it("refuses a schedule of a job type its client does not have, or with a payload the job's schema refuses", () => {
    const typo = refusal(() => new Worker(client, { scheduleNamespaces: ['default'], schedules: [defineSchedule({ name: 'fx.typo', job: 'email.sned', everyMs: 60_000 })] }));
    expect(typo.message).toMatch(/^invalid worker options: schedule "fx\.typo": schedules\.0\.job: unknown job type "email\.sned"/);
    const payload = refusal(
      () => new Worker(client, { scheduleNamespaces: ['default'], schedules: [defineSchedule({ name: 'fx.bad', job: 'email.send', payload: { to: 42 }, everyMs: 60_000 })] }),
    );
    expect(payload.message).toMatch(/^invalid worker options: schedule "fx\.bad": schedules\.0\.payload\.to: /);
  });
});

describe('workhorse worker with a schedule it could never store', () => {
  let db: TestDatabase;
  let client: Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = createClient({ connectionString: db.url, jobs: [SendEmail] });
  });
  afterAll(async () => {
    await client?.close();
    await db?.drop();
  });

  for (const [defect, says] of [
    ['twins', /two different schedules are named "fx\.nightly"/],
    ['payload', /schedule "fx\.bad-payload": schedules\.0\.payload\.to: /],
    ['unknownType', /schedule "fx\.typo": schedules\.0\.job: unknown job type "email\.sned"/],
  ] as const) {
    it(`exits 2 before running (${defect})`, async () => {
      const run = await runCli(['worker', FIXTURE], cliEnv({ FIXTURE_CONFIG: JSON.stringify({ url: db.url, defect }) }));
      expect(run.stderr).toMatch(says);
      expect(run.stderr).not.toContain('running');
      expect(run.code).toBe(2);
      const { rows } = await db.pool.query('select count(*)::int as n from workhorse.schedules');
      expect(rows[0].n).toBe(0);
    }, 40_000);
  }

  it('refuses scheduleCatchupLimit without scheduleNamespaces (it would do nothing), and takes it with them', () => {
    const alone = refusal(() => new Worker(client, { scheduleCatchupLimit: 5 }));
    expect(alone.message).toContain('scheduleCatchupLimit applies to the slots a worker fires: give scheduleNamespaces too');
    expect(() => new Worker(client, { scheduleNamespaces: ['default'], scheduleCatchupLimit: 5 })).not.toThrow();
  });
});
