// The dashboard's files as shipped: the script is valid JavaScript (it is
// kept as text, so nothing else would notice a syntax error before a
// browser), every asset is served with its type and a year-long cache under
// its hashed URL, and all of it stays small.
import { Script } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { ASSETS, assetUrl } from '../../src/http/ui/assets/assets.js';
import { createApp } from '../../src/http/createApp.js';
import { createClient } from '../../src/client/client.js';
import { fakeTick } from '../http/helpers.js';

describe('the dashboard assets', () => {
  it('ships a script that parses, in strict mode, with no template interpolation left in it', () => {
    expect(() => new Script(ASSETS.script.body)).not.toThrow();
    expect(ASSETS.script.body.startsWith("(function () {\n'use strict';")).toBe(true);
    expect(ASSETS.script.body).not.toMatch(/`|\$\{/);
  });

  it('stays small: script under 10 KB, stylesheet under 8 KB, icon under 1 KB (uncompressed)', () => {
    expect(ASSETS.script.body.length).toBeLessThan(10_000);
    expect(ASSETS.styles.body.length).toBeLessThan(8_000);
    expect(ASSETS.icon.body.length).toBeLessThan(1_000);
  });

  it('serves each under its hashed URL with its type, cached immutably; another version is not cached', async () => {
    // The assets need no database: the client is never used.
    const client = createClient({ connectionString: 'postgres://127.0.0.1:1/none' });
    const app = createApp({ client, tick: fakeTick().fn });
    try {
      for (const a of Object.values(ASSETS)) {
        const res = await app.request(assetUrl(a));
        expect(res.status).toBe(200);
        expect(res.headers.get('content-type')).toBe(a.type);
        expect(res.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
        expect(await res.text()).toBe(a.body);
        const stale = await app.request(`/ui/assets/${a.name}?v=000000000000`);
        expect(stale.headers.get('cache-control')).toBe('no-cache');
      }
      const gz = await app.request(assetUrl(ASSETS.script), { headers: { 'accept-encoding': 'gzip' } });
      expect(gz.headers.get('content-encoding')).toBe('gzip');
    } finally {
      await client.close();
    }
  });
});
