// `workhorse tick` checks its options as runTick does before anything else:
// the database is not reached (here it does not exist) and no warning about
// the queues is printed for options a tick refuses. WORKHORSE_MAX_FANOUT
// outside 0-100 was accepted (a shell tick never fans out, so the value was
// dropped unread), a malformed WORKHORSE_QUEUES name got the "holds no job
// type" warning before its refusal, and a budget the safety margin eats is
// refused naming both. A budget just above the margin, which the command's
// own start-up then used up, is refused saying so (it was refused at random,
// with the message for a budget below the margin: the budget was counted
// from after the app module loaded).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from './support/runCli.js';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db?.drop();
});

const APP = 'test/fixtures/tick-app.ts';
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';

describe('workhorse tick checks its options first', () => {
  it.each([
    ['-3', /^workhorse tick: invalid tick options: maxFanout: Too small: expected number to be >=0$/],
    ['99999999', /^workhorse tick: invalid tick options: maxFanout: Too big: expected number to be <=100$/],
  ])('refuses WORKHORSE_MAX_FANOUT=%s with exit 2', async (value, message) => {
    const r = await runCli(['tick', APP], cliEnv({ DATABASE_URL: NO_DATABASE, WORKHORSE_MAX_FANOUT: value }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr.trimEnd()).toMatch(message);
  });

  it('refuses a malformed WORKHORSE_QUEUES name without first warning that it holds no job type', async () => {
    const r = await runCli(['tick', APP], cliEnv({ DATABASE_URL: NO_DATABASE, WORKHORSE_QUEUES: 'a b' }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toEqual([
      'workhorse tick: invalid tick options: queues.0: a queue name is 1-100 characters of letters, digits, "_", ".", ":" or "-"',
    ]);
  });

  it('refuses a WORKHORSE_QUEUES list with an empty entry rather than dropping it', async () => {
    const r = await runCli(['tick', APP], cliEnv({ DATABASE_URL: NO_DATABASE, WORKHORSE_QUEUES: 'email,,x' }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(r.stderr).toMatch(/WORKHORSE_QUEUES.*"email,,x" has an empty entry/);
  });

  it('refuses --budget-ms 1000 with the default 1000 ms margin, and runs it with a smaller margin', async () => {
    const refused = await runCli(['tick', APP, '--budget-ms', '1000'], cliEnv({ DATABASE_URL: NO_DATABASE }));
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toMatch(/^workhorse tick: invalid tick timing: the tick has \d+ ms left, not more than its safety margin of 1000 ms; lower the margin \(--safety-margin-ms/);
    const smaller = await runCli(['tick', APP, '--budget-ms', '1000', '--safety-margin-ms', '200'], cliEnv({ DATABASE_URL: NO_DATABASE }));
    // Past the options: the next thing to fail is the database.
    expect(smaller.stderr).toMatch(/^workhorse tick: cannot reach the database/);
    expect(smaller.code).toBe(1);
  });

  it('counts the budget from the command start: the flags alone decide --budget-ms 1000, and a budget start-up used up is refused saying so', async () => {
    const exact = await runCli(['tick', APP, '--budget-ms', '1000'], cliEnv({ DATABASE_URL: NO_DATABASE }));
    expect(exact.stderr).toMatch(/the tick has 1000 ms left, not more than its safety margin of 1000 ms/);
    const usedUp = await runCli(['tick', APP, '--budget-ms', '1001'], cliEnv({ DATABASE_URL: db.url }));
    expect(usedUp.code, usedUp.stderr).toBe(2);
    expect(usedUp.stderr.trimEnd().split('\n')).toHaveLength(1);
    expect(usedUp.stderr).toMatch(
      /^workhorse tick: invalid tick timing: loading the app module and checking the schema took \d+ ms of --budget-ms 1001, leaving no more than the safety margin; give a larger --budget-ms/,
    );
  });
});
