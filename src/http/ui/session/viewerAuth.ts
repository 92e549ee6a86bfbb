// Who is looking, and may they act. A bearer header is checked like the
// API's (401 when it is wrong); otherwise the session cookie, when it is
// valid, names the viewer. Pages need `read`: without credentials a browser
// is sent to the sign-in page, a live refresh gets 401. Actions need
// `admin`, a decision `decide` (401/403 from the headers alone, before the body is read); a
// session's action must also come from this site (Sec-Fetch-Site or Origin)
// and carry the session's CSRF token in its form. A bearer header needs no
// CSRF token: browsers never attach one on their own.
import type { Context, MiddlewareHandler } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { getCookie } from 'hono/cookie';
import { ForbiddenError, UnauthorizedError, ValidationError } from '../../../errors.js';
import { tokenPrincipal } from '../../middleware/auth.js';
import type { ErrorBody } from '../../middleware/errorHandler.js';
import type { Scope } from '../../../credentials/scopes.js';
import { isLiveRequest } from '../liveRequest.js';
import type { UiEnv, Viewer } from '../uiEnv.js';
import type { UiSettings } from '../uiSettings.js';
import { renderUiError } from '../views/errorView.js';
import { csrfTokenFor, isCsrfTokenOf, readSession, SESSION_COOKIE, type Session } from './sessionCookie.js';

export function identify(s: UiSettings): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const authorization = c.req.header('authorization');
    let viewer: Viewer | null = null;
    if (authorization !== undefined) {
      const p = tokenPrincipal(authorization, s.tokens);
      viewer = { name: p.name, via: 'token', scopes: p.scopes, session: null, csrf: null };
    } else if (s.sessionSecret) {
      const value = getCookie(c, SESSION_COOKIE);
      const session = value ? readSession(s.sessionSecret, value, s.tokens, s.now()) : null;
      if (session) viewer = { name: session.tokenName, via: 'session', scopes: session.scopes, session, csrf: csrfTokenFor(s.sessionSecret, session) };
    }
    c.set('viewer', viewer);
    await next();
  };
}

/** Where a page sends a browser without credentials: the sign-in page, back here afterwards. */
export function signInUrl(c: Context<UiEnv>): string {
  const url = new URL(c.req.url);
  return `/ui/sign-in?next=${encodeURIComponent(url.pathname + url.search)}`;
}

export function requireView(scope: Scope = 'read'): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const viewer = c.get('viewer') ?? null;
    if (!viewer) {
      if (isLiveRequest(c) || c.req.method !== 'GET') throw new UnauthorizedError('not signed in: sign in at /ui/sign-in or send "Authorization: Bearer <token>"');
      return c.redirect(signInUrl(c), 303);
    }
    if (!viewer.scopes.has(scope)) throw new ForbiddenError(`token "${viewer.name}" lacks the "${scope}" scope this page needs`);
    await next();
  };
}

/** A request a browser made from one of this site's own pages. Without either header, only the CSRF token vouches for it. */
export function fromThisSite(c: Context): boolean {
  const site = c.req.header('sec-fetch-site');
  if (site !== undefined) return site === 'same-origin';
  const origin = c.req.header('origin');
  if (origin === undefined) return true;
  try {
    return new URL(origin).host === (c.req.header('host') ?? new URL(c.req.url).host);
  } catch {
    return false;
  }
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** The request's form fields (application/x-www-form-urlencoded), after reading the body under the form limits. */
export async function readForm(c: Context<UiEnv>, s: UiSettings): Promise<Response | URLSearchParams> {
  const refused = await s.forms.read(c);
  // The body reader answers in the API's JSON shape; a page answers as a page.
  if (refused) return renderUiError(c, refused.status as ContentfulStatusCode, ((await refused.json()) as { error: ErrorBody }).error);
  const bytes = c.get('rawBody');
  if (bytes.length === 0) return new URLSearchParams();
  const type = (c.req.header('content-type') ?? '').split(';')[0]!.trim().toLowerCase();
  if (type !== 'application/x-www-form-urlencoded') {
    throw new ValidationError('expected a form (application/x-www-form-urlencoded)', [{ path: [], message: `content type ${type || 'missing'}` }]);
  }
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw new ValidationError('the form is not valid UTF-8', [{ path: [], message: 'invalid UTF-8' }]);
  }
  // URLSearchParams turns a percent-escape that is not UTF-8 (%ff) into U+FFFD
  // without a word; decodeURIComponent refuses it.
  for (const part of text.split('&')) {
    try {
      decodeURIComponent(part.replace(/\+/g, ' '));
    } catch {
      // A malformed escape (`%ZZ`, a lone `%`) or one that is not UTF-8 (`%ff`): both are the form's encoding.
      throw new ValidationError('the form is not validly percent-encoded UTF-8', [{ path: [], message: `a percent-escape in "${part.slice(0, 40)}" is malformed or not UTF-8` }]);
    }
  }
  const form = new URLSearchParams(text);
  // A field given twice (`choice=refund&choice=ship`) is as ambiguous as a repeated query parameter,
  // which every route refuses: form.get() took the first one without a word.
  const seen = new Set<string>();
  for (const key of form.keys()) {
    if (seen.has(key)) {
      throw new ValidationError(`the form gives "${key.slice(0, 40)}" more than once: send each field once`, [{ path: [key.slice(0, 40)], message: 'given more than once' }]);
    }
    seen.add(key);
  }
  return form;
}

/**
 * For an action: `scope` (`admin` unless said otherwise), then (for a
 * session) this site's page and the session's CSRF token. The form read is
 * left in the `form` variable for the action.
 */
export function requireAction(s: UiSettings, scope: Scope = 'admin'): MiddlewareHandler<UiEnv> {
  return async (c, next) => {
    const viewer = c.get('viewer') ?? null;
    if (!viewer) throw new UnauthorizedError('not signed in: sign in at /ui/sign-in or send "Authorization: Bearer <token>"');
    if (!viewer.scopes.has(scope)) throw new ForbiddenError(`token "${viewer.name}" lacks the "${scope}" scope this action needs`);
    const form = await readForm(c, s);
    if (form instanceof Response) return form;
    c.set('form', form);
    if (viewer.session) requireSessionForm(c, s, viewer.session, form);
    await next();
  };
}

/**
 * A session's state-changing form (each action, and sign-out): from this
 * site's own page (403 saying it came from another site), carrying the
 * session's CSRF token (403 saying the token is not this session's).
 */
export function requireSessionForm(c: Context, s: UiSettings, session: Session, form: URLSearchParams): void {
  if (!fromThisSite(c)) throw new ForbiddenError('this action came from another site; use the dashboard\'s own buttons');
  if (!isCsrfTokenOf(s.sessionSecret!, session, form.get('csrf') ?? '')) {
    throw new ForbiddenError('the form\'s CSRF token does not belong to this session: reload the page and try again');
  }
}
