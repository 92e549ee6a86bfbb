// A tick whose timing cannot work (a heartbeat as long as the budget, a
// safety margin that eats it) is refused with a message naming the setting
// the way the caller gave it: a flag from the shell, a variable on Lambda,
// an option from code. The CLI user passed --heartbeat-ms, so the message
// must not send them only to WORKHORSE_HEARTBEAT_MS.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from './support/runCli.js';

const APP = 'test/fixtures/tick-app.ts';
let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});

afterAll(async () => {
  await db?.drop();
});

describe('workhorse tick with impossible timing', () => {
  it('names --heartbeat-ms for a heartbeat not shorter than the budget', async () => {
    const r = await runCli(['tick', APP, '--budget-ms', '5000', '--heartbeat-ms', '70000'], cliEnv({ DATABASE_URL: db.url }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/^workhorse tick: invalid tick timing: heartbeatMs \(70000\) must be shorter than the tick's time limit/);
    expect(r.stderr).toMatch(/--heartbeat-ms/);
  });

  it('names --safety-margin-ms for a margin that leaves no time', async () => {
    const r = await runCli(['tick', APP, '--budget-ms', '2000', '--safety-margin-ms', '5000'], cliEnv({ DATABASE_URL: db.url }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/not more than its safety margin of 5000 ms/);
    expect(r.stderr).toMatch(/--safety-margin-ms/);
  });
});
