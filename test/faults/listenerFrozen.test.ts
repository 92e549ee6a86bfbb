// A worker's LISTEN connection against a hung server (every PostgreSQL
// process of a private cluster SIGSTOPped). Closing it used to wait for the
// server to close its side, which a stopped server never does, so a
// worker's stop() never returned while the server was frozen. close() now
// gives the server LISTENER_END_TIMEOUT_MS, then drops the socket.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnCluster, type OwnCluster } from '../../certify/ownCluster.js';
import { LISTENER_END_TIMEOUT_MS, WakeListener } from '../../src/worker/wakeListener.js';

let cluster: OwnCluster;

beforeAll(async () => {
  cluster = await startOwnCluster();
}, 60_000);

afterAll(async () => {
  cluster?.thaw();
  await cluster?.destroy();
});

describe('the wake listener against a frozen server', () => {
  it('closes within its bound instead of waiting for the server forever', async () => {
    const listener = new WakeListener({ connectionString: cluster.url() }, 'default', ['q'], () => undefined, () => undefined);
    listener.start();
    await listener.listening;
    cluster.freeze();
    try {
      const start = Date.now();
      const closed = await Promise.race([
        listener.close().then(() => 'closed'),
        new Promise((r) => setTimeout(() => r('still waiting after 15 s'), 15_000)),
      ]);
      expect(closed).toBe('closed');
      expect(Date.now() - start).toBeGreaterThanOrEqual(LISTENER_END_TIMEOUT_MS - 50);
      expect(Date.now() - start).toBeLessThan(LISTENER_END_TIMEOUT_MS + 1500);
    } finally {
      cluster.thaw();
    }
  }, 30_000);

  it('closes at once when the server answers', async () => {
    const listener = new WakeListener({ connectionString: cluster.url() }, 'default', ['q'], () => undefined, () => undefined);
    listener.start();
    await listener.listening;
    const start = Date.now();
    await listener.close();
    expect(Date.now() - start).toBeLessThan(1000);
  }, 30_000);
});
