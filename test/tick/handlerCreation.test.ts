// createTickHandler checks what it is given when the module loads, as
// defineApp checks the app: a missing or bad app, an unknown option or a
// bad value is a ConfigError then, not at every Lambda invocation after a
// deploy.
import { expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createTickHandler, defineApp, defineJob } from '../../src/index.js';

const Job = defineJob({ type: 'handler.made', schema: z.object({}) });
const app = defineApp({ jobs: [Job], configure: (w) => void w.handle(Job, () => 'ok') });

const refusal = (f: () => unknown): unknown => {
  try {
    f();
  } catch (err) {
    return err;
  }
  return 'no error';
};

it('refuses a missing app, an unknown option and a bad value at once', () => {
  expect(refusal(() => createTickHandler(undefined as never))).toMatchObject({ message: 'createTickHandler: the app must be a defineApp({ jobs, configure }) value' });
  const unknown = refusal(() => createTickHandler(app, { foo: 1 } as never));
  expect(unknown).toBeInstanceOf(ConfigError);
  expect((unknown as Error).message).toBe('invalid createTickHandler options: (root): Unrecognized key: "foo"');
  expect((refusal(() => createTickHandler(app, { concurrency: -1 })) as Error).message).toMatch(/^invalid createTickHandler options: concurrency: /);
});

it('makes a handler from good options, the database left to the environment', () => {
  expect(typeof createTickHandler(app, { namespace: 'x', safetyMarginMs: 500 })).toBe('function');
});
