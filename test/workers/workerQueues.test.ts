// A worker given a queue twice claims from it once: each claim walked the
// queue twice (and a tick given WORKHORSE_QUEUES=a,a the same).
import { describe, expect, it } from 'vitest';
import { createClient, Worker } from '../../src/index.js';

describe('worker queues', () => {
  it('names each queue once, in the order first given', async () => {
    const client = createClient({ connectionString: 'postgres://postgres@127.0.0.1:1/none' });
    try {
      expect(new Worker(client, { queues: ['email', 'sms', 'email'] }).options.queues).toEqual(['email', 'sms']);
      expect(new Worker(client, { queue: 'email' }).options.queues).toEqual(['email']);
    } finally {
      await client.close();
    }
  });
});
