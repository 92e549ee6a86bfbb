// `workhorse demo` tells the fleet story as tables; the story must be what
// the tables show. Step 7 says build 2 never claims J6 (only build 1 has its
// handler): every build-1 worker that survived the SIGKILL must have left,
// so J6 is due, ready and unleased there, and step 8's build-1 worker runs it.
// Before that J6 is scheduled for later, which its note says (`due in … min`).
// The leaving workers drain: the jobs they were running finish, once.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createEmptyDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from './support/runCli.js';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;

beforeAll(async () => {
  db = await createEmptyDatabase();
});

afterAll(async () => {
  await db?.drop();
});

/** The table rows printed under the step whose heading starts with `n.`: job label -> cells. */
function stepTable(stdout: string, n: number): Map<string, string[]> {
  const at = stdout.indexOf(`\n${n}. `);
  expect(at, `step ${n} printed`).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, string[]>();
  for (const line of stdout.slice(at + 1).split('\n').slice(1)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (/^J\d$/.test(cells[0]!)) rows.set(cells[0]!, cells.slice(1));
  }
  return rows;
}

describe('workhorse demo', () => {
  it.each([
    ['unpaced', []],
    ['paced as for the dashboard', ['--pace-ms', '1500']],
  ])('%s: shows J6 ready and unleased during the rolling deploy, then run by build 1', async (_, extra) => {
    const r = await runCli(['demo', ...extra], cliEnv({ DATABASE_URL: db.url }), undefined, 90_000);
    expect(r.code, r.stderr).toBe(0);
    // Until the rolling deploy J6 is scheduled for later, and its row says so rather than look claimable.
    for (const n of [1, 2, 3, 4, 5, 6]) {
      const j6 = stepTable(r.stdout, n).get('J6')!;
      expect(j6[0], `step ${n}`).toBe('Ready');
      expect(j6[4], `step ${n}`).toMatch(/^handler in build 1 only; due in \d+ min$/);
    }
    const step7 = stepTable(r.stdout, 7);
    expect(step7.size).toBe(6);
    // columns: status, leased by, lease, execution, note
    expect(step7.get('J6')!.slice(0, 4)).toEqual(['Ready', '·', '·', '0']);
    expect(step7.get('J6')![4]).toBe('handler in build 1 only');
    for (const label of ['J1', 'J2', 'J3', 'J4', 'J5']) expect(step7.get(label)![0]).toBe('Succeeded');
    const heading7 = /\n7\. Rolling deploy: (w\d)(?: and (w\d))? drained and left/.exec(r.stdout);
    expect(heading7, 'step 7 names the build-1 workers that left').not.toBeNull();
    const step8 = stepTable(r.stdout, 8);
    for (const cells of step8.values()) expect(cells[0]).toBe('Succeeded');
    expect(step8.get('J6')![3]).toBe('1');
    // The rolling deploy drained: the jobs the leaving workers ran finished there and
    // ran once; only the SIGKILLed worker's job ran again (execution 2).
    const executions = [...step8.values()].map((cells) => cells[3]).sort();
    expect(executions).toEqual(['1', '1', '1', '1', '1', '2']);
    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const stopped = await c.query(`select count(*)::int as n from workhorse.job_attempts where error->>'name' = 'WorkerStoppedError'`);
      expect(stopped.rows[0].n).toBe(0);
    } finally {
      await c.end();
    }
  }, 120_000);
});
