// Every JSON API response, an error's too, says no-store (its body holds
// payloads, results and errors) and nosniff; the dashboard's assets keep
// their own long cache.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, TOKEN, withToken, type HttpHarness } from './helpers.js';

let db: TestDatabase;
let h: HttpHarness;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db);
});
afterAll(async () => {
  await h?.client.close();
  await db?.drop();
});

describe('the JSON API', () => {
  it('answers with Cache-Control: no-store and X-Content-Type-Options: nosniff, errors included', async () => {
    const { id } = await h.client.enqueue('email.send', { to: 'a@example.com', subject: 'hi' });
    for (const [path, status] of [[`/jobs/${id}`, 200], ['/jobs/999999', 404], ['/jobs/x', 400], ['/nowhere', 404]] as const) {
      const res = await withToken(h.app, 'GET', path);
      expect(res.status, path).toBe(status);
      expect(res.headers.get('cache-control'), path).toBe('no-store');
      expect(res.headers.get('x-content-type-options'), path).toBe('nosniff');
    }
    const head = await h.app.request(`/jobs/${id}`, { method: 'HEAD', headers: { authorization: `Bearer ${TOKEN}` } });
    expect(head.headers.get('cache-control')).toBe('no-store');
  });
});
