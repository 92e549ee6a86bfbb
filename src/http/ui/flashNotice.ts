// Proof that a page's notice ("Job #7 cancelled.") comes from an action
// this server just carried out. An action redirects to its page with
// ?done=<what>&subject=<to what>, and with that redirect sets a flash
// cookie holding the same address: HttpOnly, Secure, SameSite=Strict,
// `__Host-` (only this host can set it, so neither a link nor a sibling
// subdomain can plant one), for a minute. A page keeps its notice
// parameters only when the cookie names the very address it was asked
// for, and clears the cookie as it shows the notice. A crafted link
// (`/ui/jobs/1?done=job-cancelled&subject=999`) shows no notice, and
// neither does a reload of a real one.
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { readQuery } from '../body.js';
import { isLiveRequest } from './liveRequest.js';
import type { UiEnv } from './uiEnv.js';
import { noticeUrl, type NoticeCode } from './views/common.js';

export const NOTICE_COOKIE = '__Host-workhorse-notice';

const COOKIE = { path: '/', secure: true, httpOnly: true, sameSite: 'Strict' } as const;

/** An action's answer: 303 to `path` with its notice, vouched for by the flash cookie. */
export function redirectWithNotice(c: Context<UiEnv>, path: string, done: NoticeCode, subject: string): Response {
  const location = noticeUrl(path, done, subject);
  setCookie(c, NOTICE_COOKIE, location, { ...COOKIE, maxAge: 60 });
  return c.redirect(location, 303);
}

/** Whether `noted` (an address the server redirected to) is the address `c` asks for, both as the URL parser normalises them. */
function sameAddress(c: Context<UiEnv>, noted: string): boolean {
  const asked = new URL(c.req.url);
  const target = new URL(noted, asked.origin);
  return target.origin === asked.origin && target.pathname === asked.pathname && target.search === asked.search;
}

/**
 * A page's query parameters, its notice (`done`, `subject`) kept only for
 * the address the flash cookie names, which is then cleared: the notice is
 * shown once. A live refresh, which never shows the notice, leaves the
 * cookie alone.
 */
export function pageQuery(c: Context<UiEnv>): Record<string, string | string[]> {
  const query = readQuery(c);
  if (query.done === undefined && query.subject === undefined) return query;
  const noted = getCookie(c, NOTICE_COOKIE);
  if (!isLiveRequest(c) && noted !== undefined && sameAddress(c, noted)) {
    deleteCookie(c, NOTICE_COOKIE, COOKIE);
    return query;
  }
  delete query.done;
  delete query.subject;
  return query;
}
