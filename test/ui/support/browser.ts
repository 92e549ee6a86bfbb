// The browser the dashboard tests drive: Debian's Chromium through
// playwright-core, headless, found like a shell finds it (PATH, then the
// usual install locations). When it is missing the test fails with a
// message naming it and how to install it; it never skips. Screenshots go
// to .workhorse/screenshots/ (git-ignored), one PNG per view.
import { accessSync, constants, mkdirSync, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';

export const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking'];
const FALLBACK_DIRS = ['/usr/bin', '/usr/local/bin', '/snap/bin'];
const NAMES = ['chromium', 'chromium-browser'];
export const SCREENSHOT_DIR = join(process.cwd(), '.workhorse', 'screenshots');

function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

export function findChromium(pathVariable = process.env.PATH ?? ''): string {
  const dirs = [...new Set([...pathVariable.split(delimiter).filter(Boolean), ...FALLBACK_DIRS])];
  for (const dir of dirs) for (const name of NAMES) if (isExecutableFile(join(dir, name))) return join(dir, name);
  throw new Error(
    'Chromium is not installed: the dashboard tests (test/ui/) drive Debian\'s chromium (/usr/bin/chromium) with playwright-core. ' +
      `Install it (Debian/Ubuntu: \`apt-get install chromium\`; .ci/run does this) or put \`chromium\` on PATH. Looked in: ${dirs.join(', ')}`,
  );
}

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: findChromium(), args: CHROMIUM_ARGS });
}

export async function newPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; problems: string[] }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  // A CSP violation, a script error or a failed asset shows up here.
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console error: ${m.text()}`);
  });
  return { context, page, problems };
}

/** Signs in through the form, as a person would. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/ui`);
  await page.getByLabel('API token').fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  const path = join(SCREENSHOT_DIR, `${name}.png`);
  await page.screenshot({ path, fullPage });
  return path;
}

// Browser globals for the function page.evaluate runs in the page (the
// suite is type-checked without the DOM library).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const getComputedStyle: (el: unknown) => { color: string; backgroundColor: string };
/* eslint-enable @typescript-eslint/no-explicit-any */

/** The lowest contrast ratio of any visible text on the page (WCAG's formula), and where it is. */
export function worstContrast(page: Page): Promise<{ ratio: number; what: string }> {
  return page.evaluate(() => {
    const rgb = (s: string) => (s.match(/[\d.]+/g) ?? []).map(Number);
    const lum = ([r, g, b]: number[]) =>
      [r!, g!, b!].map((v) => (v / 255 <= 0.03928 ? v / 255 / 12.92 : ((v / 255 + 0.055) / 1.055) ** 2.4)).reduce((s, v, i) => s + v * [0.2126, 0.7152, 0.0722][i]!, 0);
    const background = (el: { parentElement: unknown } | null): number[] => {
      for (; el; el = el.parentElement as typeof el) {
        const c = rgb(getComputedStyle(el).backgroundColor);
        if (c.length === 3 || (c.length === 4 && c[3]! > 0)) return c.slice(0, 3);
      }
      return [255, 255, 255];
    };
    let min = { ratio: 99, what: '' };
    for (const el of document.querySelectorAll('body *')) {
      if (!el.offsetParent || ![...el.childNodes].some((n: { nodeType: number; textContent: string }) => n.nodeType === 3 && n.textContent.trim())) continue;
      const [a, b] = [lum(rgb(getComputedStyle(el).color)), lum(background(el))];
      const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
      if (ratio < min.ratio) min = { ratio, what: `${el.tagName}.${el.className}: ${String(el.textContent).trim().slice(0, 30)}` };
    }
    return min;
  });
}

export interface Transfer {
  /** Bytes received per path (headers and the encoded body); cached answers are left out. */
  sizes: Record<string, number>;
  bytes: number;
}

/**
 * What one page load transfers over the network, first with an empty cache
 * (a new browser context reading with a bearer header, so nothing is
 * cached yet), then again once its assets are cached. The live refresh is
 * not part of a load.
 */
export async function measureTransfer(browser: Browser, url: string, token: string): Promise<{ transfer: { cold: Transfer; warm: Transfer }; close: () => Promise<void> }> {
  const context = await browser.newContext({ extraHTTPHeaders: { authorization: `Bearer ${token}` } });
  const page = await context.newPage();
  const load = async (): Promise<Transfer> => {
    const done: Promise<[string, number]>[] = [];
    const onFinished = (req: import('playwright-core').Request) => {
      if (req.resourceType() === 'fetch') return;
      done.push(req.sizes().then((s) => [new URL(req.url()).pathname, s.responseBodySize + s.responseHeadersSize]));
    };
    page.on('requestfinished', onFinished);
    await page.goto(url, { waitUntil: 'load' });
    await new Promise((r) => setTimeout(r, 300));
    page.off('requestfinished', onFinished);
    const sizes = Object.fromEntries((await Promise.all(done)).filter(([, n]) => n > 0));
    return { sizes, bytes: Object.values(sizes).reduce((a, b) => a + b, 0) };
  };
  const cold = await load();
  const warm = await load();
  return { transfer: { cold, warm }, close: () => context.close() };
}
