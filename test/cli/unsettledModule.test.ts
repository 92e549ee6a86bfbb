// A module named on the command line whose top-level await never settles
// (it awaits a promise nobody resolves) ended `workhorse worker`, `tick` and
// `serve --app` with Node's exit code 13 and nothing on stderr. Each now
// says, in one line naming the module, that its loading never finished,
// and exits 1 (a module that fails while loading).
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/runCli.js';

const MODULE = fileURLToPath(new URL('../fixtures/unsettledTopLevelAwait.ts', import.meta.url));
const URL_ = 'postgres://postgres@127.0.0.1:1/none';

describe('a module whose top-level await never settles', () => {
  it.each([
    ['worker', ['worker', MODULE]],
    ['tick', ['tick', MODULE]],
    ['serve', ['serve', '--port', '0', '--app', MODULE]],
  ])('workhorse %s says its loading never finished and exits 1', async (command, args) => {
    const r = await runCli(args, cliEnv({ DATABASE_URL: URL_ }));
    const lines = r.stderr.trimEnd().split('\n').filter((l) => !l.startsWith('[workhorse]'));
    expect(lines).toEqual([
      `workhorse ${command}: could not load ${MODULE}: its loading never finished: a top-level await that never settles (nothing is left that could settle it)`,
    ]);
    expect(r.code).toBe(1);
  }, 40_000);
});
