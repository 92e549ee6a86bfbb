// A worker's queues are checked when it is built: a queue named twice is a
// ConfigError naming `queues` (it was taken, and each claim walked the
// queue twice).
import { describe, expect, it } from 'vitest';
import { ConfigError, createClient, Worker } from '../../src/index.js';

describe('worker queues', () => {
  it('refuses a queue named twice, and takes distinct ones', async () => {
    const client = createClient({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      let refused: unknown;
      try {
        new Worker(client, { queues: ['email', 'email'] });
      } catch (err) {
        refused = err;
      }
      expect(refused).toBeInstanceOf(ConfigError);
      expect((refused as ConfigError).issues[0]!.path).toEqual(['queues']);
      expect((refused as Error).message).toMatch(/must not name a queue twice/);
      expect(new Worker(client, { queues: ['email', 'sms'] }).options.queues).toEqual(['email', 'sms']);
    } finally {
      await client.close();
    }
  });
});
