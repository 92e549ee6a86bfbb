// A dashboard under test: the real HTTP app over a real test database,
// served on a loopback port, with an admin token, a read-only token, an
// enqueue-only token and a session secret.
import { createClient, type Client } from '../../../src/client/client.js';
import { createApp } from '../../../src/http/createApp.js';
import type { HttpAppConfig } from '../../../src/http/appConfig.js';
import type { TestDatabase } from '../../helpers/db.js';
import { fakeTick } from '../../http/helpers.js';
import testApp from '../../http/fixtures/app.js';
import { startServer, type RunningServer } from '../../http/support/server.js';

export const ADMIN_TOKEN = 'ui-admin-token-0123456789';
export const READ_TOKEN = 'ui-read-token-0123456789';
export const ENQUEUE_TOKEN = 'ui-enqueue-token-0123456789';
export const SESSION_SECRET = 'ui-session-secret-0123456789-0123456789';

export interface Dashboard {
  client: Client;
  server: RunningServer;
  url: string;
  logged: unknown[];
  close(): Promise<void>;
}

export async function startDashboard(db: TestDatabase, overrides: Partial<HttpAppConfig> = {}): Promise<Dashboard> {
  const client = createClient({ connectionString: db.url, poolMax: 6 });
  const logged: unknown[] = [];
  const app = createApp({
    client,
    app: testApp,
    apiTokens: [
      { name: 'ops', token: ADMIN_TOKEN, scopes: ['read', 'admin'] },
      { name: 'viewer', token: READ_TOKEN, scopes: ['read'] },
      { name: 'edge', token: ENQUEUE_TOKEN, scopes: ['enqueue'] },
    ],
    sessionSecret: SESSION_SECRET,
    tick: fakeTick().fn,
    log: (_m, err) => logged.push(err),
    ...overrides,
  });
  const server = await startServer(app);
  return {
    client,
    server,
    url: server.url,
    logged,
    close: async () => {
      await server.close();
      await client.close();
    },
  };
}

/** The session cookie a sign-in answers (as a Cookie header), or throws with the response. */
export async function sessionCookie(url: string, token: string): Promise<string> {
  const res = await fetch(`${url}/ui/sign-in`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url },
    body: new URLSearchParams({ token, next: '/ui' }),
  });
  const set = res.headers.get('set-cookie');
  if (res.status !== 303 || !set) throw new Error(`sign-in answered ${res.status}: ${await res.text()}`);
  return set.split(';')[0]!;
}

/** The CSRF token a page carries for this session (from its sign-out form). */
export async function csrfOf(url: string, cookie: string): Promise<string> {
  const page = await (await fetch(`${url}/ui`, { headers: { cookie } })).text();
  const m = /name="csrf" value="([^"]+)"/.exec(page);
  if (!m) throw new Error('no CSRF token on the page');
  return m[1]!;
}
