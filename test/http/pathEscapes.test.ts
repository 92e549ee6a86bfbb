// Path parameters with percent-escapes that do not decode (a "%" without two
// hex digits, a cut UTF-8 sequence, an encoded surrogate) are a 400
// validation_failed naming the parameter, over a real socket, and nothing is
// written under the escape taken literally: no signal kept for the key
// "%ZZ", no queue row, no worker looked up as "%ZZ". A well-formed escape of
// "%" itself (%25) still addresses the name with the percent sign. The 400
// comes before the body is read: such a request whose body never arrived
// waited for it, to be refused with a 408 at the body timeout instead.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, TOKEN, type ErrorJson, type HttpHarness } from './helpers.js';
import { rawRequest, readResponse, requestHead, startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db);
  server = await startServer(h.app);
});

afterAll(async () => {
  await server.close();
  await h.client.close();
  await db.drop();
});

const BAD = ['%ZZ', '%E0%A4%A', '%ED%A0%80', '%', 'a%2'];

/** [method, path with {bad} where the parameter goes, the parameter's name] */
const ROUTES: [string, string, string][] = [
  ['GET', '/jobs/{bad}', 'id'],
  ['POST', '/jobs/{bad}/cancel', 'id'],
  ['POST', '/jobs/{bad}/retry', 'id'],
  ['POST', '/jobs/1/signals/{bad}', 'name'],
  ['POST', '/jobs/1/decisions/{bad}', 'name'],
  ['POST', '/signals/{bad}/paid', 'key'],
  ['POST', '/signals/order-1/{bad}', 'name'],
  ['POST', '/queues/{bad}/pause', 'name'],
  ['POST', '/queues/{bad}/resume', 'name'],
  ['POST', '/workers/{bad}/pause', 'id'],
  ['POST', '/workers/{bad}/resume', 'id'],
];

async function rows(): Promise<number> {
  const r = await db.pool.query<{ n: string }>(
    'select (select count(*) from workhorse.job_signals) + (select count(*) from workhorse.queues) + (select count(*) from workhorse.jobs) as n',
  );
  return Number(r.rows[0]!.n);
}

function send(method: string, path: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { method, headers: { authorization: `Bearer ${TOKEN}` } });
}

describe('malformed percent-escapes in path parameters', () => {
  it.each(ROUTES)('%s %s is 400 naming the parameter and writes nothing', async (method, template, param) => {
    const before = await rows();
    for (const bad of BAD) {
      const path = template.replace('{bad}', bad);
      const res = await send(method, path);
      const json = (await res.json()) as ErrorJson;
      expect(res.status, `${method} ${path}: ${JSON.stringify(json)}`).toBe(400);
      expect(json.error.code).toBe('validation_failed');
      expect(json.error.issues).toEqual([{ path: [param], message: expect.stringContaining('malformed percent-encoding') }]);
    }
    expect(await rows()).toBe(before);
  });

  it.each(ROUTES.filter(([method]) => method === 'POST'))('%s %s is 400 at once, before a body that never arrives', async (method, template) => {
    const head = requestHead(method, template.replace('{bad}', '%ZZ'), {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      'content-length': '100',
      connection: 'close',
    });
    const socket = await rawRequest(server.port, head, '{');
    try {
      const res = await readResponse(socket);
      expect(res.status, res.body).toBe(400);
      expect(JSON.parse(res.body)).toMatchObject({ error: { code: 'validation_failed' } });
    } finally {
      socket.destroy();
    }
  });

  it('a well-formed %25 still addresses the name holding "%"', async () => {
    const res = await send('POST', '/signals/100%25/paid');
    expect(res.status).toBe(202);
    const kept = await db.pool.query<{ key: string }>('select key from workhorse.job_signals');
    expect(kept.rows.map((r) => r.key)).toEqual(['100%']);
  });

  it('the dashboard answers its own 400 page for an action under a malformed escape', async () => {
    const res = await send('POST', '/ui/workers/%ZZ/pause');
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toContain('text/html');
    expect(await res.text()).toContain('malformed percent-encoding');
  });
});
