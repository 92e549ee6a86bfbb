// The tick's list variables (WORKHORSE_QUEUES, WORKHORSE_SCHEDULE_NAMESPACES):
// empty is unset (the default), a list is its entries, and one of only
// spaces is refused, naming the variable. WORKHORSE_SCHEDULE_NAMESPACES of
// spaces read as "fire no slot" (no retention either) without a word.
import { expect, it } from 'vitest';
import { ConfigError } from '../../src/errors.js';
import { parseTickEnv } from '../../src/tick/env.js';

it('reads empty as unset and a list as its entries', () => {
  expect(parseTickEnv({ WORKHORSE_SCHEDULE_NAMESPACES: '' }).options.scheduleNamespaces).toBeUndefined();
  expect(parseTickEnv({ WORKHORSE_SCHEDULE_NAMESPACES: 'default, reports' }).options.scheduleNamespaces).toEqual(['default', 'reports']);
});

it('refuses a list of only spaces, naming the variable', () => {
  for (const name of ['WORKHORSE_SCHEDULE_NAMESPACES', 'WORKHORSE_QUEUES']) {
    let err: unknown;
    try {
      parseTickEnv({ [name]: '   ' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toBe(`invalid environment: ${name}: is only spaces: leave it empty or unset for the default, or name the entries`);
  }
});
