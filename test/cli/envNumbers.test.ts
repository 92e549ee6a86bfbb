// Numeric environment variables are whole numbers written in digits. A
// value that is not one names the variable and quotes the value (it used to
// say "expected number, received NaN"), and "1e1" is refused rather than
// read as 10, as the numeric flags do.
import { describe, expect, it } from 'vitest';
import { cliEnv, runCli } from './support/runCli.js';

const APP = 'test/fixtures/tick-app.ts';
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';

describe('numeric environment variables', () => {
  it.each([
    ['tick', 'WORKHORSE_CONCURRENCY', 'abc'],
    ['tick', 'WORKHORSE_HEARTBEAT_MS', '1e3'],
    ['tick', 'WORKHORSE_RETENTION_MS', '4.5'],
    ['serve', 'WORKHORSE_MAX_BODY_BYTES', 'lots'],
    ['serve', 'WORKHORSE_HTTP_TICK_BUDGET_MS', '0x2710'],
  ])('workhorse %s refuses %s=%s with one line naming it and quoting the value', async (command, name, value) => {
    const args = command === 'tick' ? ['tick', APP] : ['serve', '--port', '0'];
    const r = await runCli(args, cliEnv({ DATABASE_URL: NO_DATABASE, [name]: value }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      `workhorse ${command}: invalid environment: ${name}: expected a whole number, not ${JSON.stringify(value)}`,
    ]);
  });

  it('still reads a whole number, spaces around it ignored', async () => {
    const r = await runCli(['tick', APP], cliEnv({ DATABASE_URL: NO_DATABASE, WORKHORSE_CONCURRENCY: ' 4 ' }));
    // Past the environment: the next thing to fail is the database.
    expect(r.stderr).toMatch(/cannot reach the database/);
  });
});
