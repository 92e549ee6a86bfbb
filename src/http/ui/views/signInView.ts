// The sign-in page: one field for an API token (exchanged for a session
// cookie; the token is not stored anywhere). It says plainly when sign-in
// cannot work on this server (no session secret) and why a browser may
// refuse the cookie (it is Secure: https, or localhost / 127.0.0.1).
import { html, type Html } from '../html.js';
import { document } from '../layout.js';

export interface SignInState {
  /** Where to go afterwards (a /ui path). */
  next: string;
  /** Why the last attempt failed. */
  problem?: string;
  /** The server has no session secret. */
  disabled: boolean;
  /** The request came over plain http from a host a browser will not keep Secure cookies for. */
  insecure: boolean;
}

export function signInPage(s: SignInState): Html {
  const problem = s.problem ? html`<p class="problem" role="alert" id="sign-in-problem">${s.problem}</p>` : '';
  const form = s.disabled
    ? html`<p class="problem" role="alert">Sign-in is off on this server: set <code>WORKHORSE_SESSION_SECRET</code> (at least 32 characters, e.g. <code>openssl rand -hex 32</code>) and restart it. Scripts can still read <code>/ui</code> with an <code>Authorization: Bearer</code> header.</p>`
    : html`<form method="post" action="/ui/sign-in">
<input type="hidden" name="next" value="${s.next}">
<label for="token">API token<input id="token" name="token" type="password" autocomplete="current-password" required minlength="16" aria-describedby="token-help"></label>
<p class="muted small" id="token-help">A token from <code>WORKHORSE_API_TOKEN</code> or <code>WORKHORSE_API_TOKENS</code> with the <code>read</code> scope; <code>admin</code> lets you act. It is exchanged for a session cookie and not kept.</p>
<button type="submit" class="primary">Sign in</button>
</form>`;
  const insecure = s.insecure
    ? html`<p class="problem">This page came over plain http from a host other than localhost: browsers drop the session cookie (it is <code>Secure</code>). Reach the dashboard over https, or on localhost / 127.0.0.1.</p>`
    : '';
  return document(
    'Sign in',
    html`<main id="main" class="signin"><h1>workhorse dashboard</h1>${problem}${insecure}${form}</main>`,
  );
}
