// Why the dashboard's retry or discard of one outbox event changed nothing:
// the namespace holds no such event (404, as for an unknown job or queue),
// or it is delivered or being delivered (409). Asked only once the action
// came back empty, with one read: the newest event at or below the id.
import type { Client } from '../../client/client.js';
import { ConflictError, NotFoundError } from '../../errors.js';
import { MAX_BIGINT } from '../../storable.js';

export async function outboxRefusal(client: Client, id: string, done: 'retried' | 'discarded'): Promise<NotFoundError | ConflictError> {
  const above = BigInt(id) + 1n;
  const [newest] = await client.outbox.list({ limit: 1, cursor: above <= MAX_BIGINT ? String(above) : undefined });
  if (newest?.id !== id) return new NotFoundError(`outbox event ${id} not found in namespace "${client.namespace}"`);
  return new ConflictError(`outbox event ${id} was not ${done}: it is delivered or being delivered`);
}
