// `WorkhorseApp` is an exported type, so an app written by hand (not
// through defineApp) compiles. A tick, an appWorker and the HTTP app
// accepted one as long as it had a `jobs` array and a `configure`
// function, and a bad schedule or job in it failed later as a bare
// TypeError (`Cannot read properties of undefined (reading 'type')`), or
// became a worker claiming from queue `null`. Each now makes defineApp's
// checks: a ConfigError naming the field. (And appWorker reads an option
// given as undefined as not given.)
import { expect, it } from 'vitest';
import { z } from 'zod';
import { appWorker, ConfigError, createClient, defineJob, type WorkhorseApp } from '../../src/index.js';
import { createApp } from '../../src/http/createApp.js';
import { runTick } from '../../src/tick/runTick.js';

const Job = defineJob({ type: 'hand.made', schema: z.object({}) });
const badSchedule = { jobs: [Job], configure() {}, schedules: [{ name: 'nightly' }] } as unknown as WorkhorseApp;
const badJob = { jobs: [{ type: 'x' }], configure() {} } as unknown as WorkhorseApp;

async function thrown(f: () => unknown): Promise<unknown> {
  try {
    await f();
  } catch (err) {
    return err;
  }
  return 'no error';
}

it('runTick: a ConfigError naming the bad schedule, before any connection', async () => {
  const err = await thrown(() => runTick({ app: badSchedule, connectionString: 'postgres://nobody@127.0.0.1:1/none', deadline: new Date(Date.now() + 3000) }));
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as Error).message).toBe('invalid tick options: app: schedules.0: a schedule must be a defineSchedule() value');
});

it('appWorker: a ConfigError naming the bad job', async () => {
  const err = await thrown(() => appWorker(badJob));
  expect(err).toBeInstanceOf(ConfigError);
  expect((err as Error).message).toBe('appWorker: jobs.0: a job must be a defineJob() value');
  expect((await thrown(() => appWorker(null as never))) as Error).toMatchObject({ message: 'appWorker: the app must be a defineApp({ jobs, configure }) value' });
});

it('createApp: a ConfigError naming the bad schedule', async () => {
  const client = createClient({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
  try {
    const err = await thrown(() => createApp({ client, app: badSchedule, apiToken: 'a'.repeat(32), tick: async () => ({}) as never }));
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/app: schedules\.0: a schedule must be a defineSchedule\(\) value/);
  } finally {
    await client.close();
  }
});

it('accepts a valid app written by hand, as defineApp would', async () => {
  const app: WorkhorseApp = { jobs: [Job], configure: (w) => void w.handle(Job, () => 'ok') };
  expect(appWorker(app).options).toMatchObject({ queues: ['default'] });
});

it('appWorker reads an option given as undefined as not given (it replaced the app’s schedule namespaces with none)', () => {
  const app: WorkhorseApp = { jobs: [Job], configure: (w) => void w.handle(Job, () => 'ok') };
  expect(appWorker(app, { scheduleNamespaces: undefined }).options).toMatchObject({ scheduleNamespaces: appWorker(app).options!.scheduleNamespaces });
  expect(appWorker(app).options!.scheduleNamespaces).toContain('sys');
});
