// What a failed dashboard request answers. A page gets an HTML page with the
// status its typed error stands for and the error's message (a bad filter is
// a 400 naming the field, a missing job a 404, a refused action a 401, 403
// or 409); a live refresh gets the API's JSON error shape instead. Anything
// unexpected is a 500 that says nothing about internals, logged like the
// API's.
import type { Context } from 'hono';
import { describeError, errorResponse } from '../../middleware/errorHandler.js';
import { html } from '../html.js';
import { document } from '../layout.js';
import { isLiveRequest } from '../liveRequest.js';

export function uiErrorHandler(log: (message: string, err: unknown) => void) {
  return (err: unknown, c: Context): Response => {
    let known = describeError(err);
    if (!known) {
      log(`[workhorse ui] ${c.req.method} ${c.req.path} failed`, err);
      known = { status: 500, body: { code: 'internal', message: 'internal error' } };
    }
    if (isLiveRequest(c)) return errorResponse(c, known.status, known.body);
    const signIn = known.status === 401 ? html` <a href="/ui/sign-in">Sign in</a>.` : '';
    const page = document(
      `Error ${known.status}`,
      html`<main id="main" class="signin"><h1>${known.status === 404 ? 'Not found' : known.status === 403 ? 'Not allowed' : known.status === 401 ? 'Not signed in' : 'That did not work'}</h1>
<p class="problem" role="alert" id="error-message">${known.body.message}${signIn}</p>
<p class="muted small">Code <code>${known.body.code}</code> (HTTP ${known.status}). <a href="/ui">Back to the dashboard</a></p></main>`,
    );
    return c.html(page.text, known.status);
  };
}
