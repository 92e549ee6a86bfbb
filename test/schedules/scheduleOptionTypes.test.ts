// A slot's job options are typed as enqueue's: a backoff was typed
// `unknown`, so `{ kind: 'exp' }` or `42` compiled and failed only when the
// schedule was defined. The type refuses them now (the @ts-expect-error
// lines fail the type check if it does not), and the runtime still does.
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { ConfigError, defineJob, defineSchedule } from '../../src/index.js';

const Job = defineJob({ type: 'typed.slot', schema: z.object({ a: z.string() }) });
const base = { name: 'typed.slot', job: Job, payload: { a: 'x' }, everyMs: 60_000 } as const;

describe("a slot's backoff option", () => {
  it('is typed and checked as enqueue takes it', () => {
    const ok = defineSchedule({ ...base, options: { backoff: { kind: 'fixed', baseMs: 5_000 } } });
    expect(ok.options.backoff).toEqual({ kind: 'fixed', baseMs: 5_000 });
    // @ts-expect-error an unknown kind
    expect(() => defineSchedule({ ...base, options: { backoff: { kind: 'exp' } } })).toThrow(ConfigError);
    // @ts-expect-error not an object
    expect(() => defineSchedule({ ...base, options: { backoff: 42 } })).toThrow(/options\.backoff: Invalid input: expected object, received number/);
    // @ts-expect-error an unknown key
    expect(() => defineSchedule({ ...base, options: { backoff: { maxAttemps: 3 } } })).toThrow(/Unrecognized key: "maxAttemps"/);
  });
});
