// Which methods a path has routes for, asked of the app's own router, so a
// known path asked with the wrong method is a 405 with an Allow header
// rather than a 404, without each route module listing its methods twice.
// Middleware and catch-alls (registered for every method) do not count.
// HEAD is allowed wherever GET is: Hono answers HEAD with the GET route.
// The answer comes from the not-found handler, before any route's guard
// runs, so like a 404 it needs no credentials: it tells only which routes
// exist, which docs/http.md publishes anyway.
import type { Env, Hono } from 'hono';

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

function rank(method: string): number {
  const i = ORDER.indexOf(method);
  return i < 0 ? ORDER.length : i;
}

/** A lookup of the methods with a route for a path; empty for a path no route has. */
export function allowedMethods<E extends Env>(app: Hono<E>): (path: string) => string[] {
  let methods: string[] | undefined;
  return (path) => {
    // Read once, on first use: by then every route is registered.
    methods ??= [...new Set(app.routes.map((r) => r.method.toUpperCase()))].filter((m) => m !== 'ALL');
    const allowed = methods.filter((m) => app.router.match(m, path)[0].some(([[, route]]) => route.method.toUpperCase() === m));
    if (allowed.includes('GET') && !allowed.includes('HEAD')) allowed.push('HEAD');
    return allowed.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  };
}
