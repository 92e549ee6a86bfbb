// Outbox delivery throughput, measured in this process on a fresh
// database: events published in transactions of 100, then delivered by
// delivery passes to a webhook on loopback that answers 200 at once (so the
// number is the outbox's own cost: lease, signed POST, settle), without keys
// and with 8 keys (each key's events go one after the other).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createClient, deliverOutbox, webhookSink } from '../../src/index.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { withDatabase, type PhaseContext } from './context.js';

export interface OutboxRun {
  keys: number;
  events: number;
  eventsPerSec: number;
}

export interface OutboxResult {
  runs: OutboxRun[];
  publishPerSec: number;
}

export async function measureOutbox(ctx: PhaseContext): Promise<OutboxResult> {
  const events = Math.min(ctx.flags.jobs, 5000);
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200).end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  try {
    return await withDatabase(ctx, 'workhorse', async (db) => {
      const client = createClient({ connectionString: db.url, poolMax: 4 });
      await client.migrate();
      const o = parseOutboxOptions({ sinks: [webhookSink({ url, secret: 'bench-secret-0123456789' })], batchSize: 200, concurrency: 16 });
      const runs: OutboxRun[] = [];
      let publishPerSec = 0;
      try {
        for (const keys of [0, 8]) {
          const t0 = performance.now();
          for (let i = 0; i < events; i += 100) {
            const c = await client.pool.connect();
            try {
              await c.query('begin');
              for (let j = i; j < Math.min(events, i + 100); j++) {
                await client.publish('bench.event', { j }, { tx: c, ...(keys ? { key: `k${j % keys}` } : {}) });
              }
              await c.query('commit');
            } finally {
              c.release();
            }
          }
          if (keys === 0) publishPerSec = events / ((performance.now() - t0) / 1000);
          const t1 = performance.now();
          let delivered = 0;
          while (delivered < events) delivered += (await deliverOutbox(client, o)).delivered;
          const eventsPerSec = events / ((performance.now() - t1) / 1000);
          runs.push({ keys, events, eventsPerSec });
          ctx.log(`outbox, ${keys || 'no'} keys: ${Math.round(eventsPerSec)} events/s`);
          await client.pool.query('delete from workhorse.outbox_events');
        }
      } finally {
        await client.close();
      }
      return { runs, publishPerSec };
    });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
}

export function outboxLines(o: OutboxResult): string[] {
  return [
    '',
    'outbox (workhorse, webhook on loopback answering 200):',
    `  publish, 100 events per transaction: ${Math.round(o.publishPerSec)} events/s`,
    ...o.runs.map((r) => `  delivery, ${r.keys ? `${r.keys} keys` : 'no keys'}: ${Math.round(r.eventsPerSec)} events/s (${r.events} events)`),
  ];
}
