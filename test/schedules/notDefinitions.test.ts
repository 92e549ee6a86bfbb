// schedules.define and defineApp take defineSchedule() values. Anything else
// (null, {}, a hand-made object with only a name) failed with a TypeError
// from deep inside storing it ("Cannot read properties of undefined
// (reading 'type')"); it is a ConfigError naming the item now, and nothing
// is stored.
import { z } from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createClient, defineApp, defineJob, defineSchedule, Schedules, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Report = defineJob({ type: 'report.nightly', schema: z.object({}) });
const nightly = defineSchedule({ name: 'reports.nightly', job: Report, cron: '0 3 * * *' });

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Report], poolMax: 2 });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('a value that is not a defineSchedule() value', () => {
  it('is a ConfigError from schedules.define, naming the item, and nothing is stored', async () => {
    const schedules = new Schedules(client);
    for (const bad of [null, undefined, {}, 'reports.nightly']) {
      const err = await schedules.define(bad as never).catch((e: unknown) => e);
      expect(err, String(bad)).toBeInstanceOf(ConfigError);
      expect((err as ConfigError).message).toMatch(/a schedule must be a defineSchedule\(\) value/);
    }
    const err = await schedules.define([nightly, { name: 'hand.made', scheduleNamespace: 'default' } as never]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).issues).toEqual([{ path: [1], message: 'a schedule must be a defineSchedule() value' }]);
    expect(await schedules.list()).toEqual([]);
    expect((await schedules.define([nightly])).map((s) => s.name)).toEqual(['reports.nightly']);
  });

  it('is a ConfigError from defineApp naming schedules.<i>', () => {
    const build = () => defineApp({ jobs: [Report], configure() {}, schedules: [nightly, { name: 'hand.made', scheduleNamespace: 'default' } as never] });
    expect(build).toThrow(ConfigError);
    expect(build).toThrow(/schedules\.1: a schedule must be a defineSchedule\(\) value/);
  });
});
