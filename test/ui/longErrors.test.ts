// Long error texts on the dashboard are cut with an ellipsis and never
// through a character: the attempts ledger's one-line summary split an
// emoji at its 80th UTF-16 unit ("aaa…a\uFFFD"), and the Outbox view cut a
// last error at 300 characters with no ellipsis and no way to read the rest
// (it is now folded under the cut line). A real PostgreSQL.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, type Client } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { loadJob } from '../../src/http/ui/data/jobData.js';
import { loadOutbox } from '../../src/http/ui/data/outboxData.js';
import { jobView } from '../../src/http/ui/views/jobView.js';
import { outboxView } from '../../src/http/ui/views/outboxView.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Fails = defineJob({ type: 'long.fails', schema: z.object({}), retry: { maxAttempts: 2, backoff: { kind: 'fixed', baseMs: 0, maxMs: 0 } } });
const MESSAGE = `${'a'.repeat(72)}🚀 and more after it`;

let db: TestDatabase;
let client: Client;
beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Fails] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

it("the attempts ledger's summary of an error cuts before an emoji, with an ellipsis", async () => {
  const { id } = await client.enqueue(Fails, {});
  const w = new Worker(client, { listen: false }).handle(Fails, () => {
    throw new Error(MESSAGE);
  });
  expect(await w.runOnce()).toBe(true);
  await w.stop();
  const html = String(jobView(await loadJob(client, { id }, {}, Date.now()), null).live);
  const summary = /<details id="attempt-1-error"><summary>([^<]*)<\/summary>/.exec(html)![1]!;
  expect(summary).not.toContain('\uFFFD');
  expect(summary.endsWith('…')).toBe(true);
  expect([...summary].every((c) => c.codePointAt(0)! < 0xd800 || c.codePointAt(0)! > 0xdfff)).toBe(true);
  // Failed for now: its last error shown. Retried and succeeded: its result, the error left to the ledger.
  expect(html).toContain('id="sec-error"');
  await client.retry(id);
  const ok = new Worker(client, { listen: false }).handle(Fails, () => 'fine');
  expect(await ok.runOnce()).toBe(true);
  await ok.stop();
  const after = String(jobView(await loadJob(client, { id }, {}, Date.now()), null).live);
  expect(after).toContain('id="sec-result"');
  expect(after).not.toContain('id="sec-error"');
  expect(after).toContain('id="attempt-1-error"');
});

it("an outbox event's long last error: cut with an ellipsis, the whole of it folded beneath", async () => {
  const { id } = await client.publish('long.topic', {});
  const long = `sink said: ${'x'.repeat(1_400)} END`;
  await db.pool.query("update workhorse.outbox_events set attempts = 1, last_error = jsonb_build_object('message', $2::text) where id = $1", [id, long]);
  const html = String(outboxView(await loadOutbox(client, {}, Date.now()), null).live);
  const folded = new RegExp(`<details id="outbox-error-${id}"><summary class="note">(sink said: x+…)</summary><pre[^>]*>(sink said: x+ END)</pre></details>`).exec(html);
  expect(folded).not.toBeNull();
  expect(folded![1]!.length).toBe(300);
  expect(folded![2]).toBe(long);
});
