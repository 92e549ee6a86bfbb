// An app's configure registers handlers synchronously. An async one was
// called and never awaited: the handlers it added after an await came too
// late (every tick claimed nothing, without a word), and its rejection was
// an unhandled one that ended the process. defineApp refuses an async
// function, and a configure that returns a promise anyway (a plain function
// returning one) is a ConfigError when the tick or the process calls it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineApp } from '../../src/app/defineApp.js';
import { appWorker, ConfigError, createClient, defineJob, defineWorkerProcess, runWorkerProcess, type WorkerBase } from '../../src/index.js';
import { runTick } from '../../src/tick/runTick.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Job = defineJob({ type: 'async.configure', schema: z.object({}) });
let db: TestDatabase;
const unhandled: unknown[] = [];
const onUnhandled = (e: unknown) => unhandled.push(e);

beforeAll(async () => {
  db = await createTestDatabase();
  process.on('unhandledRejection', onUnhandled);
});

afterAll(async () => {
  process.off('unhandledRejection', onUnhandled);
  await db?.drop();
});

describe('a configure that is not synchronous', () => {
  it('is refused by defineApp when it is an async function', () => {
    expect(() =>
      defineApp({
        jobs: [Job],
        async configure(w) {
          await Promise.resolve();
          w.handle(Job, async () => 'late');
        },
      }),
    ).toThrow(/app: configure is an async function: register handlers synchronously/);
  });

  it('fails a tick, and a worker process, with a ConfigError when it returns a promise that rejects, leaving no unhandled rejection', async () => {
    const configure = (w: WorkerBase): void => {
      void w;
      return Promise.reject(new Error('mailer config missing')) as unknown as void;
    };
    const app = defineApp({ jobs: [Job], configure });
    const client = createClient({ connectionString: db.url, jobs: [Job] });
    await client.enqueue(Job, {});
    try {
      const err = await runTick({ app, connectionString: db.url, deadline: new Date(Date.now() + 5000), scheduleNamespaces: [] }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect((err as Error).message).toMatch(/^app: configure returned a promise: register handlers synchronously/);
      const proc = await runWorkerProcess(
        defineWorkerProcess({ client: () => client, workers: [{ options: { workerId: 'cfg', listen: false }, configure: configure as never }] }),
        { log: () => undefined },
      ).then(
        async (p) => p.done,
        (e: unknown) => e,
      );
      expect(proc).toBeInstanceOf(ConfigError);
      expect((proc as Error).message).toMatch(/^worker cfg: configure returned a promise/);
    } finally {
      await client.close();
    }
    await new Promise((r) => setTimeout(r, 50));
    expect(unhandled).toEqual([]);
  });

  it("refuses an app's configure that returns a thenable other than a Promise as returning a promise, in a worker process too", async () => {
    const Other = defineJob({ type: 'async.configure.other', schema: z.object({}) });
    // Its handler of a type outside the app is not the problem to name: the thenable (what an async body returns) is.
    const configure = (w: WorkerBase): void => {
      w.handle(Other, async () => 'other');
      return { then: () => undefined } as unknown as void;
    };
    const app = defineApp({ jobs: [Job], configure });
    const client = createClient({ connectionString: db.url, jobs: [Job, Other] });
    try {
      const proc = await runWorkerProcess(
        defineWorkerProcess({ client: () => client, workers: [appWorker(app, { workerId: 'cfg-thenable', listen: false })] }),
        { log: () => undefined },
      ).then(
        async (p) => p.done,
        (e: unknown) => e,
      );
      expect(proc).toBeInstanceOf(ConfigError);
      expect((proc as Error).message).toMatch(/^worker cfg-thenable: configure returned a promise/);
    } finally {
      await client.close();
    }
  });
});
