// The Hono environment of the dashboard's routes: the API's variables plus
// who is looking at the page. A viewer comes from a bearer header (scripted
// checks, no CSRF token: a header is not sent by a browser on its own) or
// from the session cookie (a browser, with the session's CSRF token).
import type { HttpBindings, HttpVariables } from '../env.js';
import type { Scope } from '../../credentials/scopes.js';
import type { Session } from './session/sessionCookie.js';

export interface Viewer {
  /** The configured name of the token (never the token). */
  name: string;
  via: 'token' | 'session';
  scopes: ReadonlySet<Scope>;
  /** Present for a session. */
  session: Session | null;
  /** The CSRF token forms carry; null for a bearer header. */
  csrf: string | null;
}

export interface UiVariables extends HttpVariables {
  /** Null (or unset) when the request carries no credentials. Optional, so the API's own functions (readQuery, the body reader) take a dashboard context. */
  viewer?: Viewer | null;
  /** An action's form fields, once its checks passed (requireAction). */
  form?: URLSearchParams;
}

export type UiEnv = { Variables: UiVariables; Bindings: HttpBindings };

export const can = (viewer: Viewer | null | undefined, scope: Scope): boolean => !!viewer && viewer.scopes.has(scope);
