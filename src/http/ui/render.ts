// Answers a page: the whole document for a navigation, only its live region
// for the script's refresh (same URL, the live header).
import type { Context } from 'hono';
import { layout, type Page } from './layout.js';
import { isLiveRequest } from './liveRequest.js';
import type { UiEnv } from './uiEnv.js';

export function renderPage(c: Context<UiEnv>, page: Page, namespace: string): Response {
  c.header('Vary', 'X-Workhorse-Live, Cookie, Authorization');
  if (isLiveRequest(c)) return c.html(page.live.text);
  return c.html(layout(page, { namespace, viewer: c.get('viewer') ?? null }).text);
}
