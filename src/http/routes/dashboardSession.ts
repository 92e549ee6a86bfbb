// Signing in and out of the dashboard. POST /ui/sign-in takes a bearer
// token from the form (from this site's own page only), checks it like the
// API does, and answers a session cookie — HttpOnly, Secure,
// SameSite=Strict, `__Host-` — carrying its name, scopes and expiry,
// signed with the session secret; the token is not kept. A wrong token is
// 401, one without `read` 403, both on the sign-in page again. POST
// /ui/sign-out (with the session's CSRF token) clears the browser's cookie;
// sessions are stateless, so a copy of the cookie stays valid until it
// expires (docs/dashboard.md says how to end sessions early).
import { Hono, type Context } from 'hono';
import { deleteCookie, setCookie } from 'hono/cookie';
import * as z from 'zod';
import { ForbiddenError, UnauthorizedError } from '../../errors.js';
import { parseInput } from '../../validation.js';
import { readQuery } from '../body.js';
import { noQuery } from '../queryParams.js';
import { tokenPrincipal } from '../middleware/auth.js';
import { issueSession, SESSION_COOKIE } from '../ui/session/sessionCookie.js';
import { fromThisSite, readForm, requireSessionForm } from '../ui/session/viewerAuth.js';
import type { UiEnv } from '../ui/uiEnv.js';
import type { UiSettings } from '../ui/uiSettings.js';
import { signInPage } from '../ui/views/signInView.js';

const BASE = 'http://dashboard.invalid';
/**
 * Only a path of the dashboard itself: never another site, and never a path
 * that leaves /ui once its dot segments are resolved ("/ui/../jobs/1",
 * "/ui/%2e%2e/jobs/1" are the JSON API's /jobs/1 to a browser). Answers the
 * resolved path and query.
 */
const nextSchema = z
  .string()
  .regex(/^\/ui(?:[/?][^\s\\]*)?$/)
  .transform((v) => new URL(v, BASE))
  .refine((u) => u.origin === BASE && (u.pathname === '/ui' || u.pathname.startsWith('/ui/')))
  .transform((u) => `${u.pathname}${u.search}`)
  .catch('/ui');

const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Plain http from a host browsers do not treat as secure: they will not keep a Secure cookie. */
function insecure(c: Context): boolean {
  const url = new URL(c.req.url);
  const forwarded = c.req.header('x-forwarded-proto');
  return url.protocol === 'http:' && forwarded !== 'https' && !LOOPBACK.has(url.hostname) && !url.hostname.endsWith('.localhost');
}

export function dashboardSession(s: UiSettings): Hono<UiEnv> {
  const r = new Hono<UiEnv>();
  const page = (c: Context<UiEnv>, next: string, status: 200 | 401 | 403, problem?: string) =>
    c.html(signInPage({ next, problem, disabled: !s.sessionSecret, insecure: insecure(c) }).text, status);

  r.get('/sign-in', (c) => page(c, nextSchema.parse(c.req.query('next') ?? '/ui'), 200));

  r.post('/sign-in', async (c) => {
    // As every POST of the dashboard and the API: no query parameter (where to go next is the form's `next`).
    parseInput(noQuery, readQuery(c), 'query: sign-in takes no query parameter');
    // The page itself says sign-in is off and how to turn it on: no second sentence.
    if (!s.sessionSecret) return page(c, '/ui', 403);
    if (!fromThisSite(c)) throw new ForbiddenError('sign-in came from another site');
    const form = await readForm(c, s);
    if (form instanceof Response) return form;
    const next = nextSchema.parse(form.get('next') ?? '/ui');
    const presented = (form.get('token') ?? '').trim();
    let name: string;
    try {
      if (!/^\S{1,512}$/.test(presented)) throw new UnauthorizedError('invalid bearer token');
      name = tokenPrincipal(`Bearer ${presented}`, s.tokens).name;
    } catch (err) {
      if (err instanceof UnauthorizedError) return page(c, next, 401, 'That token is not valid on this server.');
      throw err;
    }
    const token = s.tokens.find((t) => t.name === name)!;
    if (!token.scopes.includes('read')) return page(c, next, 403, `Token "${token.name}" lacks the "read" scope the dashboard needs.`);
    const { value } = issueSession(s.sessionSecret, token, s.sessionTtlMs, s.now());
    setCookie(c, SESSION_COOKIE, value, { path: '/', secure: true, httpOnly: true, sameSite: 'Strict', maxAge: Math.floor(s.sessionTtlMs / 1000) });
    return c.redirect(next, 303);
  });

  r.post('/sign-out', async (c) => {
    parseInput(noQuery, readQuery(c), 'query: sign-out takes no query parameter');
    const viewer = c.get('viewer') ?? null;
    const form = await readForm(c, s);
    if (form instanceof Response) return form;
    if (viewer?.session) requireSessionForm(c, s, viewer.session, form);
    deleteCookie(c, SESSION_COOKIE, { path: '/', secure: true, httpOnly: true, sameSite: 'Strict' });
    return c.redirect('/ui/sign-in', 303);
  });
  return r;
}
