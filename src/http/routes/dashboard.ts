// The dashboard at /ui: the namespace as the database sees it, in a
// browser, shipped inside the package (no CDN, nothing fetched at run
// time). Reading needs `read`, acting `admin`, from a bearer header or a
// session cookie (src/http/ui/session/); every action is a call of the
// client's API. Every response carries a strict Content-Security-Policy
// and is compressed when the browser accepts it.
import { Hono } from 'hono';
import { compress } from 'hono/compress';
import { NotFoundError } from '../../errors.js';
import { BodyReader } from '../bodyReader.js';
import { identify } from '../ui/session/viewerAuth.js';
import { securityHeaders } from '../ui/securityHeaders.js';
import type { UiEnv } from '../ui/uiEnv.js';
import { FORM_LIMITS, type UiSettings } from '../ui/uiSettings.js';
import { uiErrorHandler } from '../ui/views/errorView.js';
import { dashboardActions } from './dashboardActions.js';
import { dashboardAssets } from './dashboardAssets.js';
import { dashboardPages } from './dashboardPages.js';
import { dashboardSession } from './dashboardSession.js';
import type { RouteDeps } from './deps.js';

export function dashboardRoutes(d: RouteDeps): Hono<UiEnv> {
  const log = d.config.log ?? ((message: string, err: unknown) => console.error(message, err));
  const s: UiSettings = {
    client: d.client,
    tokens: d.config.tokens,
    sessionSecret: d.config.sessionSecret,
    sessionTtlMs: d.config.sessionTtlMs,
    now: d.config.now ?? Date.now,
    forms: new BodyReader(FORM_LIMITS),
  };
  const r = new Hono<UiEnv>();
  r.onError(uiErrorHandler(log));
  r.use(securityHeaders());
  r.use(compress());
  r.route('/assets', dashboardAssets());
  r.use(identify(s));
  r.route('/', dashboardSession(s));
  r.route('/', dashboardActions(s));
  r.route('/', dashboardPages(s));
  // Anything else under /ui is a 404 page, like every other dashboard error.
  // The path is named as it came, percent-encoded: a live refresh's JSON
  // answer carries the message unescaped.
  r.all('/*', (c) => {
    const url = new URL(c.req.url);
    // `/ui/` (a typed or pasted address with its slash) is the Namespace view, as `/ui` is.
    if (url.pathname === '/ui/' && (c.req.method === 'GET' || c.req.method === 'HEAD')) return c.redirect(`/ui${url.search}`, 301);
    throw new NotFoundError(`no dashboard page at ${c.req.method} ${url.pathname}`);
  });
  return r;
}
