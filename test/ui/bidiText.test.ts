// Bidirectional formatting characters in stored text (a handler's error
// message, a dedupe key) are shown escaped in the dashboard's text, as the
// CLI shows them: a right-to-left override reversed the page's own words
// after it ("last error: refund of <RLO>$001 approved; dedupe order-1234"
// read "... 4321-redro epuded ;devorppa 100$"). In an attribute (a form's
// hidden field posts the value back) the value is kept as it is.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { html } from '../../src/http/ui/html.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { READ_TOKEN, startDashboard, type Dashboard } from './support/dashboard.js';

let db: TestDatabase;
let d: Dashboard;

beforeAll(async () => {
  db = await createTestDatabase();
  d = await startDashboard(db);
});
afterAll(async () => {
  await d?.close();
  await db?.drop();
});

it('escapes them in text and keeps them in attributes', () => {
  const v = 'refund of \u202e$001 approved';
  expect(html`<p title="${v}">last error: ${v}; dedupe x</p><input type="hidden" name="n" value="${v}">`.text).toBe(
    `<p title="${v}">last error: refund of \\u202e$001 approved; dedupe x</p><input type="hidden" name="n" value="${v}">`,
  );
});

it("shows a failed job's error and dedupe key with the override escaped", async () => {
  const { id } = await d.client.enqueue('report.build', { account: 'acme', rows: 1 }, { dedupeKey: 'order-\u202e1234', maxAttempts: 1 });
  const w = new Worker(d.client, { queues: ['reports'], listen: false }).handle('report.build', () => {
    throw new Error('refund of \u202e$001 approved');
  });
  await w.runOnce();
  await w.stop();
  for (const path of ['/ui?status=failed', `/ui/jobs/${id}`]) {
    const page = await (await fetch(`${d.url}${path}`, { headers: { authorization: `Bearer ${READ_TOKEN}` } })).text();
    expect(page, path).toContain('refund of \\u202e$001 approved');
    // No override anywhere in the page's text (outside tags).
    expect(page.replace(/<[^>]*>/g, ''), path).not.toMatch(/[\u202a-\u202e\u2066-\u2069]/);
  }
});
