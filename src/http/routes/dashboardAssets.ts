// The dashboard's script, stylesheet and icon (no credentials needed: they
// hold no data). Served from the strings in src/http/ui/assets/, cached for
// a year under their hashed URL.
import { Hono } from 'hono';
import { ASSETS } from '../ui/assets/assets.js';
import type { UiEnv } from '../ui/uiEnv.js';

export function dashboardAssets(): Hono<UiEnv> {
  const r = new Hono<UiEnv>();
  for (const a of Object.values(ASSETS)) {
    r.get(`/${a.name}`, (c) => {
      const cache = c.req.query('v') === a.hash ? 'public, max-age=31536000, immutable' : 'no-cache';
      return c.body(a.body, 200, { 'Content-Type': a.type, 'Cache-Control': cache, ETag: `"${a.hash}"` });
    });
  }
  return r;
}
