// What `workhorse <command> --help` points a reader to must exist: a
// document it names is in docs/, a README section it names is a heading of
// the README, and `serve --help` names the variables it reads, since the
// installed package ships no docs/.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { commands } from '../../src/cli/main.js';
import { cliEnv, ROOT, runCli } from './support/runCli.js';

const readmeHeadings = readFileSync(join(ROOT, 'README.md'), 'utf8')
  .split('\n')
  .filter((l) => l.startsWith('#'))
  .map((l) => l.replace(/^#+\s*/, '').toLowerCase());

describe('--help references', () => {
  it.each(commands.map((c) => c.name))('workhorse %s --help names only documents and sections that exist', async (name) => {
    const r = await runCli([name, '--help'], cliEnv({ DATABASE_URL: 'not-a-url' }));
    expect(r.code, r.stderr).toBe(0);
    for (const [doc] of r.stdout.matchAll(/docs\/[\w-]+\.md/g)) expect(existsSync(join(ROOT, doc)), doc).toBe(true);
    for (const [, section] of r.stdout.matchAll(/README's ([\w ]+?) section/g)) {
      expect(readmeHeadings.some((h) => h.includes(section!.toLowerCase())), `README section "${section}"`).toBe(true);
    }
  });

  it('workhorse serve --help names the variables it reads', async () => {
    const r = await runCli(['serve', '--help'], cliEnv({ DATABASE_URL: 'not-a-url' }));
    for (const v of ['DATABASE_URL', 'WORKHORSE_API_TOKEN', 'WORKHORSE_API_TOKENS', 'WORKHORSE_SIGNING_SECRET', 'docs/http.md']) {
      expect(r.stdout).toContain(v);
    }
  });
});
