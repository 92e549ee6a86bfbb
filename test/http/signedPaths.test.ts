// The one signing rule, over a real socket: a request is signed over its
// path and query as the WHATWG URL parser normalises them (canonicalTarget),
// which is what the server verifies, whatever the client wrote on the
// request line. signRequest normalises the path it is given, so signing the
// path you send always verifies; a hand-made signature over a target that
// normalises differently does not.
import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalTarget, signRequest } from '../../src/signing/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { buildHttp, SECRET, type HttpHarness } from './helpers.js';
import { rawRequest, readResponse, requestHead, startServer, type RunningServer } from './support/server.js';

let db: TestDatabase;
let h: HttpHarness;
let server: RunningServer;

beforeAll(async () => {
  db = await createTestDatabase();
  h = buildHttp(db, { signedScopes: ['read'] });
  server = await startServer(h.app);
});

afterAll(async () => {
  await server.close();
  await h.client.close();
  await db.drop();
});

/** Sends GET `target` exactly as written, with the given signature headers. */
async function rawGet(target: string, headers: Record<string, string>): Promise<number> {
  const socket = await rawRequest(server.port, requestHead('GET', target, { ...headers, connection: 'close' }));
  const res = await readResponse(socket);
  socket.destroy();
  return res.status;
}

/** A signature made by hand over `path` as given, without normalising it. */
function handSigned(path: string): Record<string, string> {
  const ts = String(Math.floor(Date.now() / 1000));
  const mac = createHmac('sha256', SECRET).update(`v1\n${ts}\nGET\n${path}\n`).digest('hex');
  return { 'x-workhorse-timestamp': ts, 'x-workhorse-signature': `v1=${mac}` };
}

describe('canonicalTarget', () => {
  it.each([
    ['/jobs', '/jobs'],
    ['/jobs/../jobs', '/jobs'],
    ['/jobs/./x/..', '/jobs/'],
    ['/jobs/%2e%2e/jobs', '/jobs'],
    ['//jobs', '//jobs'],
    ['/j%6Fbs', '/j%6Fbs'],
    ['/jobs/é', '/jobs/%C3%A9'],
    ['/jobs?q=a b', '/jobs?q=a%20b'],
    ["/jobs?q='x'", '/jobs?q=%27x%27'],
    ['/jobs?b=2&a=1', '/jobs?b=2&a=1'],
    ['/jobs?', '/jobs'],
    ['/jobs?limit=5#frag', '/jobs?limit=5'],
  ])('%s is signed as %s', (given, canonical) => {
    expect(canonicalTarget(given)).toBe(canonical);
    // Normalising twice changes nothing.
    expect(canonicalTarget(canonical)).toBe(canonical);
  });

  it('refuses a target without a leading slash (a URL or a bare path)', () => {
    expect(() => canonicalTarget('http://host/jobs')).toThrow(TypeError);
    expect(() => canonicalTarget('jobs')).toThrow(TypeError);
  });
});

describe('the server verifies the normalised target', () => {
  it.each([
    ['/jobs/../jobs?limit=5', '/jobs?limit=5'],
    ['/jobs/%2e%2e/jobs', '/jobs'],
    ['/j%6Fbs?limit=2', '/j%6Fbs?limit=2'],
    ['/jobs?', '/jobs'],
    ["/jobs?limit='3'", '/jobs?limit=%273%27'],
  ])('a request sent to %s verifies when signed with signRequest over that path (normalised: %s)', async (sent, canonical) => {
    const headers = await signRequest({ secret: SECRET, method: 'GET', path: sent });
    const status = await rawGet(sent, headers);
    // 200, or 400 for a query the route refuses: either way the signature was accepted.
    expect([200, 400]).toContain(status);
    expect(await rawGet(sent, handSigned(canonical))).toBe(status);
  });

  it('refuses a hand-made signature over the target as written when it normalises differently', async () => {
    expect(await rawGet('/jobs/../jobs?limit=5', handSigned('/jobs/../jobs?limit=5'))).toBe(401);
    expect(await rawGet("/jobs?limit='3'", handSigned("/jobs?limit='3'"))).toBe(401);
  });

  it('keeps escapes as written: a signature over the decoded path does not verify /j%6Fbs', async () => {
    expect(await rawGet('/j%6Fbs', await signRequest({ secret: SECRET, method: 'GET', path: '/jobs' }))).toBe(401);
  });
});
