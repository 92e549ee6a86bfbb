// The demo's story must not depend on how fast the machine is. Step 7 says
// J6 is due but stays ready because only build 2 is left; with short work
// (as on a machine where the worker processes start slowly relative to the
// jobs), J6 must still come due only after every build-1 worker has gone,
// not at a fixed delay a surviving build-1 worker can reach first.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemo } from '../../src/demo/scenario.js';
import { createEmptyDatabase } from '../helpers/db.js';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;

beforeAll(async () => {
  db = await createEmptyDatabase();
});

afterAll(async () => {
  await db?.drop();
});

/** The rows printed under the step whose heading starts with `n.`: job label -> cells. */
function stepTable(out: string, n: number): Map<string, string[]> {
  const at = out.indexOf(`\n${n}. `);
  expect(at, `step ${n} printed`).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, string[]>();
  for (const line of out.slice(at + 1).split('\n').slice(1)) {
    if (!line.startsWith('|')) break;
    const cells = line.split('|').slice(1, -1).map((c) => c.trim());
    if (/^J\d$/.test(cells[0]!)) rows.set(cells[0]!, cells.slice(1));
  }
  return rows;
}

describe('the demo with jobs much shorter than a worker start', () => {
  it('keeps J6 ready and unleased through the rolling deploy, then build 1 runs it', async () => {
    let out = '';
    await runDemo({ connectionString: db.url, out: (line) => (out += `${line}\n`), workMs: 1000 });
    const step6 = stepTable(out, 6);
    expect(step6.get('J6')!.slice(0, 4)).toEqual(['Ready', '·', '·', '0']);
    const step7 = stepTable(out, 7);
    // columns: status, leased by, lease, execution, note
    expect(step7.get('J6')!.slice(0, 4)).toEqual(['Ready', '·', '·', '0']);
    const step8 = stepTable(out, 8);
    expect(step8.get('J6')!.slice(0, 4)).toEqual(['Succeeded', '·', '·', '1']);
  }, 120_000);
});
