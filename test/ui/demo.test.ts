// `workhorse demo --ui`: the real CLI serves the dashboard on the demo's
// namespace, prints its address and a sign-in token, and a browser signed
// in with it watches the story in the table: claims by the build-1
// workers, the recovery note after the SIGKILL, every job succeeded. The
// dashboard stays up after the story until SIGINT, which exits 0.
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { createEmptyDatabase } from '../helpers/db.js';
import { waitFor } from '../helpers/wait.js';
import { cliEnv, startCli } from '../cli/support/runCli.js';
import { launchBrowser, newPage, screenshot, signIn } from './support/browser.js';

let db: Awaited<ReturnType<typeof createEmptyDatabase>>;
let browser: Browser;

beforeAll(async () => {
  db = await createEmptyDatabase();
  browser = await launchBrowser();
});

afterAll(async () => {
  await browser?.close();
  await db?.drop();
});

describe('workhorse demo --ui', () => {
  it('serves the dashboard while the fleet story runs, and until Ctrl-C', async () => {
    const child = startCli(['demo', '--ui', '--port', '0', '--pace-ms', '500'], cliEnv({ DATABASE_URL: db.url }));
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d) => (stdout += String(d)));
    child.stderr!.on('data', (d) => (stderr += String(d)));
    const { page, context, problems } = await newPage(browser);
    try {
      await waitFor(() => stdout, (s) => /sign in with the token: \S+/.test(s), { timeoutMs: 30_000, what: 'the dashboard address and token' });
      const url = /dashboard: (http:\/\/127\.0\.0\.1:\d+)\/ui/.exec(stdout)![1]!;
      const token = /sign in with the token: (\S+)/.exec(stdout)![1]!;
      await signIn(page, url, token);
      await page.waitForURL(`${url}/ui`);
      expect(await page.locator('.ns code').innerText()).toMatch(/^demo-/);

      await page.locator('tr[data-job] .badge', { hasText: 'running' }).first().waitFor({ timeout: 30_000 });
      expect(await page.locator('tbody').innerText()).toMatch(/running\s+w[123]\s+\d+\.\d s left/);
      await screenshot(page, 'demo-claimed', false);

      await page.locator('tr[data-job]', { hasText: /recovered from w[123]/ }).waitFor({ timeout: 60_000 });
      await screenshot(page, 'demo-recovered', false);

      await waitFor(() => stdout, (s) => s.includes('the story is over'), { timeoutMs: 90_000, what: 'the end of the story' });
      await expect.poll(() => page.locator('tr[data-job] .badge', { hasText: 'succeeded' }).count(), { timeout: 10_000 }).toBe(6);
      expect(await page.locator('tr[data-job]').count()).toBe(6);
      await page.goto(`${url}/ui/workers`);
      // The workers that drained deregistered; the SIGKILLed one is still in the registry, silent.
      expect(await page.locator('tr[data-worker]').allInnerTexts()).toEqual([expect.stringMatching(/^w[123]\s+process\s+1[\s\S]*silent past/)]);
      await screenshot(page, 'demo-workers', false);
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      child.kill('SIGINT');
    }
    const [code] = await once(child, 'exit');
    expect(code, stderr).toBe(0);
  }, 150_000);
});
