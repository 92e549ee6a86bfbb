// What every resource module receives from createApp.
import type { Client } from '../../client/client.js';
import type { ResolvedHttpAppConfig } from '../appConfig.js';
import type { AuthSettings } from '../middleware/auth.js';

export interface RouteDeps {
  client: Client;
  auth: AuthSettings;
  config: ResolvedHttpAppConfig;
}
