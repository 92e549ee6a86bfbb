// What a failed dashboard request answers. A page gets an HTML page with the
// status its typed error stands for and the error's message (a bad filter is
// a 400 naming the field, a missing job a 404, a refused action a 401, 403
// or 409); a live refresh gets the API's JSON error shape instead. A
// database that did not answer is a 503 with Retry-After and one log line,
// as on the API's routes. Anything unexpected is a 500 that says nothing
// about internals, logged like the API's.
import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { describeDbError } from '../../../db/transient.js';
import { describeError, errorResponse, noteDatabaseUnreachable, type ErrorBody } from '../../middleware/errorHandler.js';
import { html } from '../html.js';
import { document } from '../layout.js';
import { isLiveRequest } from '../liveRequest.js';

/** The error page (or, for a live refresh, the JSON error) of a status and error body. */
export function renderUiError(c: Context, status: ContentfulStatusCode, body: ErrorBody): Response {
  if (isLiveRequest(c)) return errorResponse(c, status, body);
  const signIn = status === 401 ? html` <a href="${signInHref(c)}">Sign in</a>.` : '';
  const title = status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : status === 401 ? 'Not signed in' : 'That did not work';
  const page = document(
    `Error ${status}`,
    html`<main id="main" class="signin"><h1>${title}</h1>
<p class="problem" role="alert" id="error-message">${body.message}${signIn}</p>
<p class="muted small">Code <code>${body.code}</code> (HTTP ${status}). <a href="/ui">Back to the dashboard</a></p></main>`,
  );
  return c.html(page.text, status);
}

/**
 * The sign-in link of a 401 page, back to where the viewer was: the page
 * itself for a GET, the page an action was posted from (its Referer, when it
 * is this site's dashboard) for a POST, such as a click after the session
 * expired. The sign-in route checks `next` again (dashboard paths only).
 */
function signInHref(c: Context): string {
  const here = new URL(c.req.url);
  let back = c.req.method === 'GET' ? `${here.pathname}${here.search}` : '';
  if (c.req.method !== 'GET') {
    try {
      const from = new URL(c.req.header('referer') ?? '');
      if (from.origin === here.origin) back = `${from.pathname}${from.search}`;
    } catch {
      // No Referer, or not a URL: back to the dashboard's first page.
    }
  }
  return back.startsWith('/ui') ? `/ui/sign-in?next=${encodeURIComponent(back)}` : '/ui/sign-in';
}

export function uiErrorHandler(log: (message: string, err: unknown) => void) {
  return (err: unknown, c: Context): Response => {
    const known = describeError(err);
    if (known?.body.code === 'database_unreachable') noteDatabaseUnreachable(c, err, log, 'ui');
    if (known?.body.code === 'database_needs_operator') log(`[workhorse ui] ${c.req.method} ${c.req.path}: ${known.body.message}:`, describeDbError(err));
    if (known) return renderUiError(c, known.status, known.body);
    log(`[workhorse ui] ${c.req.method} ${c.req.path} failed`, err);
    return renderUiError(c, 500, { code: 'internal', message: 'internal error' });
  };
}
