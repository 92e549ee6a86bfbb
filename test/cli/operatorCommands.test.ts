// `workhorse jobs` and `workhorse queues`: an operator's actions from a
// shell, through the real executable against a real database. A listing of
// the dead letters, retrying them and cancelling by id (a job an action
// cannot take is a line on stderr, the rest still go through, exit 1),
// showing a job as JSON, pausing and resuming a queue (a paused queue is
// claimed from by no one), and usage errors (exit 2, nothing done).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createClient, defineJob, Worker, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { cliEnv, runCli } from './support/runCli.js';

const Mail = defineJob({ type: 'ops.mail', schema: z.object({ n: z.number() }), retry: { maxAttempts: 1 } });
const Report = defineJob({ type: 'ops.report', schema: z.object({}), queue: 'reports' });

let db: TestDatabase;
let client: Client;
const cli = (...args: string[]) => runCli(args, cliEnv({ DATABASE_URL: db.url }));
const status = async (id: string) => (await client.getJob(id))!.status;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Mail, Report], poolMax: 2 });
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('workhorse jobs', () => {
  it('lists the dead letters, retries them by id, and says which it could not', async () => {
    const [a, b] = await client.enqueueMany([{ job: Mail, payload: { n: 1 } }, { job: Mail, payload: { n: 2 } }]);
    const worker = new Worker(client, { listen: false }).handle(Mail, () => {
      throw new Error('mailbox full');
    });
    while (await worker.runOnce()) {
      /* until both failed */
    }
    await worker.stop();
    expect([await status(a!.id), await status(b!.id)]).toEqual(['failed', 'failed']);

    const listed = await cli('jobs', 'list', '--status', 'failed');
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^id\s+type\s+queue\s+status\s+attempt\s+run at\s+finished\s+last error$/);
    expect(lines.slice(1).map((l) => l.split(/\s{2,}/).slice(0, 5))).toEqual([
      [b!.id, 'ops.mail', 'default', 'failed', '1/1'],
      [a!.id, 'ops.mail', 'default', 'failed', '1/1'],
    ]);
    expect(lines[1]).toMatch(/Error: mailbox full$/);

    // A full page's table alone on stdout; the next page's cursor on stderr (`| wc -l` counted it as a job).
    const page = await cli('jobs', 'list', '--status', 'failed', '--limit', '1');
    expect(page.stdout.trimEnd().split('\n')).toHaveLength(2);
    expect(page.stderr).toBe(`(more: add --cursor ${b!.id} for the next page)\n`);

    const json = JSON.parse((await cli('jobs', 'list', '--status', 'failed', '--limit', '1', '--json')).stdout);
    expect(json.jobs.map((j: { id: string }) => j.id)).toEqual([b!.id]);
    expect(json.nextCursor).toBe(b!.id);

    const retried = await cli('jobs', 'retry', a!.id, '999999', b!.id);
    expect(retried.code).toBe(1);
    expect(retried.stdout).toBe(`job ${a!.id}: ready\njob ${b!.id}: ready\n`);
    expect(retried.stderr).toBe('workhorse jobs: job 999999 not found in namespace "default"\n');
    expect([await status(a!.id), await status(b!.id)]).toEqual(['ready', 'ready']);

    const cancelled = await cli('jobs', 'cancel', a!.id);
    expect(cancelled).toMatchObject({ code: 0, stdout: `job ${a!.id}: cancelled\n` });
    // Cancelled again: it is what was asked. A job that ended otherwise is refused, as POST /jobs/:id/cancel is (409).
    expect(await cli('jobs', 'cancel', a!.id)).toMatchObject({ code: 0, stdout: `job ${a!.id}: cancelled\n` });
    const done = await client.enqueue(Mail, { n: 9 });
    await db.pool.query("update workhorse.jobs set status = 'succeeded', finished_at = now() where id = $1", [done.id]);
    const ended = await cli('jobs', 'cancel', done.id, a!.id);
    expect(ended.code).toBe(1);
    expect(ended.stdout).toBe(`job ${a!.id}: cancelled\n`);
    expect(ended.stderr).toBe(`workhorse jobs: job ${done.id} already ended as succeeded; only a job that has not ended can be cancelled\n`);
    expect(await status(done.id)).toBe('succeeded');

    const shown = await cli('jobs', 'show', b!.id);
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout)).toMatchObject({ id: b!.id, type: 'ops.mail', status: 'ready', payload: { n: 2 } });
  });

  it("shows a last error's terminal escapes and bidirectional overrides escaped, never writes them to the terminal", async () => {
    const { id } = await client.enqueue(Mail, { n: 5 });
    const hostile = '\u001b]0;PWNED\u0007\u001b[2J\u001b[31mRED\u202egnp.exe';
    await db.pool.query("update workhorse.jobs set status = 'failed', finished_at = now(), last_error = $2 where id = $1", [
      id,
      JSON.stringify({ name: 'Error', message: hostile }),
    ]);
    const listed = await cli('jobs', 'list', '--status', 'failed', '--limit', '1');
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(listed.stdout).toContain('Error: \\u001b]0;PWNED\\u0007\\u001b[2J\\u001b[31mRED\\u202egnp.exe');
  });

  it("lists a job waiting for a signal without timeout as run at `never`, not the 9999 date it is stored with", async () => {
    const Waits = defineJob({ type: 'ops.waits', schema: z.object({}), queue: 'waits' });
    client.define(Waits);
    const { id } = await client.enqueue(Waits, {});
    const worker = new Worker(client, { listen: false, queue: 'waits' }).handle(Waits, async (_p, ctx) => ctx.waitForSignal('go'));
    await worker.runOnce();
    await worker.stop();
    expect(await status(id)).toBe('waiting');
    const listed = await cli('jobs', 'list', '--queue', 'waits');
    expect(listed.code).toBe(0);
    const row = listed.stdout.trimEnd().split('\n')[1]!;
    expect(row.split(/\s{2,}/).slice(0, 6)).toEqual([id, 'ops.waits', 'waits', 'waiting', '1/25', 'never']);
    await client.cancel(id);
  });

  it('refuses bad input before it does anything (exit 2)', async () => {
    const { id } = await client.enqueue(Mail, { n: 3 });
    for (const args of [
      ['jobs'],
      ['jobs', 'frob'],
      ['jobs', 'retry'],
      ['jobs', 'cancel', id, 'abc'],
      ['jobs', 'list', id],
      ['jobs', 'list', '--status', 'dead'],
      ['jobs', 'list', '--limit', '0'],
      ['jobs', 'retry', id, '--keep-children'],
      ['jobs', 'show', id, id],
      ['jobs', 'retry', id, '--json'],
    ]) {
      const r = await cli(...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.stderr, args.join(' ')).toMatch(/^workhorse jobs: .*\(usage: workhorse jobs list/);
    }
    // An id past a bigint is told the range, as --cursor and the HTTP API tell it.
    const huge = await cli('jobs', 'show', '9223372036854775808');
    expect([huge.code, huge.stderr]).toEqual([2, expect.stringMatching(/"9223372036854775808" is not a job id \(a whole number from 1 to 2\^63-1\)/)]);
    // Nothing was cancelled on the way.
    expect(await status(id)).toBe('ready');
    const noUrl = await runCli(['jobs', 'list'], cliEnv());
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/^workhorse jobs: set DATABASE_URL or pass --database-url/);
  });
});

describe('workhorse queues', () => {
  it('lists the queues, pauses one (nothing is claimed from it) and resumes it', async () => {
    const { id } = await client.enqueue(Report, {});
    expect(await cli('queues', 'pause', 'reports')).toMatchObject({ code: 0, stdout: 'queue reports: paused\n' });
    const listed = (await cli('queues', 'list')).stdout.trimEnd().split('\n');
    expect(listed[0]).toMatch(/^queue\s+state\s+ready\s+running\s+waiting\s+failed\s+cancelled\s+concurrency limit\s+rate limit$/);
    expect(listed.find((l) => l.startsWith('reports'))!.split(/\s{2,}/)).toEqual(['reports', 'paused', '1', '0', '0', '0', '0', '-', '-']);
    // The queue of the first test's jobs (one cancelled, one ready) is listed too.
    expect(listed.find((l) => l.startsWith('default'))!.split(/\s{2,}/).slice(0, 2)).toEqual(['default', 'active']);
    const worker = new Worker(client, { queues: ['reports'], listen: false }).handle(Report, () => 'done');
    expect(await worker.runOnce()).toBe(false);
    expect(await cli('queues', 'resume', 'reports')).toMatchObject({ code: 0, stdout: 'queue reports: resumed\n' });
    expect(await worker.runOnce()).toBe(true);
    await worker.stop();
    expect(await status(id)).toBe('succeeded');
    // A name no job uses is a typo, most likely: refused, and no queue row is left behind.
    const typo = await cli('queues', 'pause', 'reprots');
    expect(typo.code).toBe(1);
    expect(typo.stderr).toBe(
      'workhorse queues: queue "reprots" has no unfinished jobs and no settings in namespace "default": nothing was paused (check the name; a queue whose jobs have all finished is not paused from here, though workhorse queues list shows one that holds failed or cancelled jobs: client.admin.pauseQueue(name) takes any name)\n',
    );
    expect((await client.admin.listQueues()).map((q) => q.name)).not.toContain('reprots');
    const bad = await cli('queues', 'pause', 'no spaces');
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^workhorse queues: "no spaces" is not a queue name/);
    // The built-in slots' queue is paused (holding retention and alerts) before any slot job exists, as over HTTP.
    expect(await cli('queues', 'pause', 'sys')).toMatchObject({ code: 0, stdout: 'queue sys: paused\n' });
    expect(await cli('queues', 'resume', 'sys')).toMatchObject({ code: 0, stdout: 'queue sys: resumed\n' });
  });
});
