// The curl example of docs/http.md works as printed: `workhorse serve` runs
// with the settings its "Running it" gives, bash runs the page's own lines
// (enqueue with the bearer token, then a POST /tick signed with openssl and
// sent with curl), and the tick claims and runs the README's SendEmail
// (timeoutMs 30 s). The same lines with a 10 s budget claim nothing and say
// why (skippedTimeout). Real HTTP, real curl and openssl.
import { spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startServeProcess } from '../helpers/serveProcess.js';

const readme = readFileSync(new URL('../../docs/http.md', import.meta.url), 'utf8');
const SECRET = 'readme-signing-secret-0123456789';
const TOKEN = 'readme-api-token-0123456789';

let db: TestDatabase;
let server: ChildProcess;
let url: string;

/** The lines of docs/http.md's curl block from the comment starting with `heading` to the next blank line. */
function snippet(heading: string): string {
  const block = readme.slice(readme.indexOf('## curl'));
  const lines = block.slice(block.indexOf('```sh') + 6, block.indexOf('```', block.indexOf('```sh') + 6)).split('\n');
  const start = lines.findIndex((l) => l.startsWith(`# ${heading}`));
  if (start < 0) throw new Error(`docs/http.md curl block has no "# ${heading}" section`);
  const end = lines.findIndex((l, i) => i > start && l.trim() === '');
  return lines.slice(start, end < 0 ? undefined : end).join('\n');
}

/** The first `# {...}` output line the page prints in a snippet. */
function printedOutput(text: string): Record<string, unknown> {
  const line = text.split('\n').find((l) => l.startsWith('# {'));
  return JSON.parse(line!.slice(2)) as Record<string, unknown>;
}

function bash(script: string): { code: number | null; out: string; err: string } {
  const r = spawnSync('bash', ['-euo', 'pipefail', '-c', script], {
    env: { PATH: process.env.PATH, URL: url, WORKHORSE_API_TOKEN: TOKEN, WORKHORSE_SIGNING_SECRET: SECRET },
    encoding: 'utf8',
    timeout: 60_000,
  });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

beforeAll(async () => {
  db = await createTestDatabase();
  const budget = /WORKHORSE_HTTP_TICK_BUDGET_MS=(\d+)[^\n]*\n\s*node_modules\/\.bin\/workhorse serve/.exec(readme)?.[1];
  if (!budget) throw new Error('the "Running it" command of docs/http.md sets no WORKHORSE_HTTP_TICK_BUDGET_MS');
  const serve = await startServeProcess({
    DATABASE_URL: db.url,
    WORKHORSE_SIGNING_SECRET: SECRET,
    WORKHORSE_API_TOKEN: TOKEN,
    WORKHORSE_HTTP_TICK_BUDGET_MS: budget,
    WORKHORSE_APP: '',
  }, 'test/fixtures/readme-app.ts');
  server = serve.child;
  url = serve.baseUrl;
}, 60_000);

afterAll(async () => {
  if (server && server.exitCode === null && server.signalCode === null) server.kill('SIGKILL');
  await db?.drop();
});

describe("the curl example of docs/http.md", () => {
  it('enqueues SendEmail and a signed POST /tick runs it, answering the summary the page prints', () => {
    const enqueue = snippet('Enqueue one job');
    const tick = snippet('Kick a tick');
    const r = bash(`${enqueue}\necho\n${tick}`);
    expect(r.code, r.err).toBe(0);
    const [created, summary] = r.out.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(created).toEqual(printedOutput(enqueue));
    const printed = printedOutput(tick);
    expect(Object.keys(summary!).sort()).toEqual(Object.keys(printed).sort());
    expect(summary).toMatchObject({ claimed: 1, succeeded: 1, failed: 0, skippedTimeout: 0 });
    expect(summary).toMatchObject({ ...printed, msLeft: expect.any(Number) });
  });

  it('with a 10 s budget, claims nothing and counts the job it left (skippedTimeout)', () => {
    const tick = snippet('Kick a tick').replace('{"budgetMs":40000}', '{"budgetMs":10000}');
    expect(tick).toContain('{"budgetMs":10000}');
    const enqueue = snippet('Enqueue one job').replace('welcome:42', 'welcome:43');
    const r = bash(`${enqueue}\necho\n${tick}`);
    expect(r.code, r.err).toBe(0);
    const summary = JSON.parse(r.out.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(summary).toMatchObject({ claimed: 0, skippedTimeout: 1 });
  });
});
