// What every resource module receives from createApp: the client, the
// settings, and the guards each route declares its credentials with.
import type { MiddlewareHandler } from 'hono';
import type { Client } from '../../client/client.js';
import type { ResolvedHttpAppConfig } from '../appConfig.js';
import type { HttpEnv } from '../env.js';
import type { Scope } from '../../credentials/scopes.js';

export interface RouteDeps {
  client: Client;
  config: ResolvedHttpAppConfig;
  /** Credentials holding `scope`, or one of several (checked from the headers), then the body. */
  guard(scope: Scope | readonly Scope[]): MiddlewareHandler<HttpEnv>;
  /** A valid HMAC signature (POST /tick), then the body. */
  signed: MiddlewareHandler<HttpEnv>;
}
