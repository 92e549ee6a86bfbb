// A module named on the command line whose top-level await never settles
// (it awaits a promise nobody resolves) ended `workhorse worker`, `tick` and
// `serve --app` with Node's exit code 13 and nothing on stderr. Each now
// says, in one line naming the module, that its loading never finished,
// and exits 1 (a module that fails while loading). A tick whose module
// loads slower than its --budget-ms fails at the budget.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/runCli.js';

const MODULE = fileURLToPath(new URL('../fixtures/unsettledTopLevelAwait.ts', import.meta.url));
const SLOW = fileURLToPath(new URL('../fixtures/slowTopLevelAwait.ts', import.meta.url));
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

  it('workhorse tick whose module waits on a timer past --budget-ms fails at the budget (exit 1), not when the module is done', async () => {
    const t0 = Date.now();
    const r = await runCli(['tick', SLOW, '--budget-ms', '2000'], cliEnv({ DATABASE_URL: URL_ }));
    const tookMs = Date.now() - t0;
    expect(r.stderr.trimEnd().split('\n').filter((l) => !l.startsWith('[workhorse]'))).toEqual([
      `workhorse tick: could not load ${SLOW}: its loading took all of --budget-ms 2000, so the tick did not run (a top-level await on something slow, or one that never settles)`,
    ]);
    expect(r.code).toBe(1);
    // The module's own timers do not keep it: the CLI ends the process a second after the command returned.
    expect(tookMs).toBeLessThan(30_000);
  }, 40_000);
});
