// What the CLI and a worker process write to an operator's terminal holds
// text others wrote: a handler's error message (anyone who can enqueue can
// choose it), an argument quoted in a usage error. Its control characters
// (ESC's escape sequences recolour text or set the window title, CR writes
// over the line) are written escaped. A usage error whose argument held a
// line feed lost its reason (only its first line was printed).
import { expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { outcomeLine } from '../../src/worker/outcomeLog.js';
import type { ClaimedJob } from '../../src/db/protocol.js';

const NASTY = 'first line\nsecond\tline \u001b[31mRED\u001b[0m \u001b]0;pwned-title\u0007 end \r overwritten';

async function run(...argv: string[]): Promise<{ code: number; out: string[]; err: string[] }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await main(argv, { out: (l) => out.push(l), err: (l) => err.push(l) });
  return { code, out, err };
}

it('a usage error quoting an argument with a line feed and ESC: one line, escaped, with its reason', async () => {
  const r = await run('queues', 'pause', 'x\ny\u001b[31m');
  expect(r.code).toBe(2);
  expect(r.err).toHaveLength(1);
  expect(r.err[0]).toMatch(/^workhorse queues: "x\\u000ay\\u001b\[31m" is not a queue name: .+ \(usage: workhorse queues /);
  const jobs = await run('jobs', 'show', '1\n2');
  expect(jobs.err[0]).toMatch(/^workhorse jobs: "1\\u000a2" is not a job id/);
});

it("a worker's failed-attempt line escapes the handler's control characters", () => {
  const job = { id: '328', type: 'op.echo', attempt: 1, maxAttempts: 1 } as ClaimedJob;
  const line = outcomeLine('w1', { job, status: 'failed', error: new Error(NASTY) })!;
  expect(line).not.toMatch(/[\u0000-\u001f]/);
  expect(line).toContain('failed: first line second\\u0009line \\u001b[31mRED\\u001b[0m \\u001b]0;pwned-title\\u0007 end \\u000d overwritten; the job failed for good');
});
