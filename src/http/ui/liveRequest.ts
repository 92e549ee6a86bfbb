// The dashboard's script refreshes a page by asking for it again with this
// header; the answer is only the page's live region, and errors come back
// as JSON instead of a page.
import type { Context } from 'hono';

export const LIVE_HEADER = 'x-workhorse-live';

export function isLiveRequest(c: Context): boolean {
  return c.req.header(LIVE_HEADER) === '1';
}
