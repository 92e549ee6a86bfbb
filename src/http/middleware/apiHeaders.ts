// The headers every response of the JSON API carries: its bodies hold
// payloads, results and errors, so no cache stores them, and no browser
// sniffs them as something other than JSON. (The dashboard's pages carry
// their own, stricter set: src/http/ui/securityHeaders.ts.)
import type { MiddlewareHandler } from 'hono';

export function apiHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (!c.res.headers.has('X-Content-Type-Options')) c.header('X-Content-Type-Options', 'nosniff');
    if (!c.res.headers.has('Cache-Control')) c.header('Cache-Control', 'no-store');
  };
}
