// A bearer token is presented in an Authorization header, where the server
// reads it as one run of non-space characters. A configured token with a
// stray space or newline (a copy-paste into an env file) or a character no
// header can carry was accepted at start, and then every request with it
// was "401 invalid bearer token". `workhorse serve` refuses it at start now
// (exit 2, naming the variable), and createApp with a ConfigError; a token
// that can be sent still serves.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, createApp, createClient } from '../../src/index.js';
import testApp from '../http/fixtures/app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { startServeProcess } from '../helpers/serveProcess.js';
import { cliEnv, runCli } from './support/runCli.js';

const GOOD = 'tok-0123456789abcdef';
const NO_DATABASE = 'postgres://nobody@127.0.0.1:1/none';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});

describe('a bearer token no Authorization header can carry', () => {
  it.each([
    ['WORKHORSE_API_TOKEN', `${GOOD} `],
    ['WORKHORSE_API_TOKEN', `${GOOD}\n`],
    ['WORKHORSE_API_TOKENS', JSON.stringify([{ name: 'edge', token: `tok 0123456789abcdef`, scopes: ['enqueue'] }])],
    ['WORKHORSE_API_TOKENS', JSON.stringify([{ name: 'edge', token: `tok-0123456789abcdef\u2028`, scopes: ['read'] }])],
  ])('stops workhorse serve at start: %s=%j exits 2 naming it', async (name, value) => {
    const r = await runCli(['serve', '--port', '0'], cliEnv({ DATABASE_URL: NO_DATABASE, [name]: value }));
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^workhorse serve: invalid environment: ${name}(\\.0\\.token)?: a bearer token must not contain spaces`));
  });

  it('is a ConfigError from createApp', async () => {
    const client = createClient({ connectionString: db.url, poolMax: 1 });
    try {
      expect(() => createApp({ client, app: testApp, apiToken: ` ${GOOD}`, tick: async () => ({}) as never })).toThrow(ConfigError);
    } finally {
      await client.close();
    }
  });

  it('leaves a token that can be sent working over real HTTP', async () => {
    const serve = await startServeProcess({ DATABASE_URL: db.url, WORKHORSE_API_TOKEN: GOOD });
    try {
      const res = await fetch(`${serve.baseUrl}/queues`, { headers: { authorization: `Bearer ${GOOD}` } });
      expect(res.status, serve.output()).toBe(200);
    } finally {
      serve.child.kill('SIGTERM');
      await new Promise((resolve) => serve.child.once('exit', resolve));
    }
  });
});
