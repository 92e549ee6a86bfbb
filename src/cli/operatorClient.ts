// The client an operator command (`workhorse jobs`, `workhorse queues`)
// acts through: the database of --database-url or DATABASE_URL (never the
// embedded one, which would hold no jobs of yours), the namespace of
// WORKHORSE_NAMESPACE, no job definitions (it changes jobs by id, as the
// HTTP API and the dashboard do), closed when the command is done.
import type { EnvConfig } from '../config.js';
import { createClient, type Client } from '../client/client.js';
import { UsageError } from './usageError.js';

export async function withOperatorClient<T>(databaseUrl: string | undefined, env: EnvConfig, act: (client: Client) => Promise<T>): Promise<T> {
  const url = databaseUrl ?? env.databaseUrl;
  if (!url) throw new UsageError('set DATABASE_URL or pass --database-url');
  const client = createClient({ connectionString: url, namespace: env.namespace, poolMax: 2 });
  try {
    await client.ready();
    return await act(client);
  } finally {
    await client.close();
  }
}
