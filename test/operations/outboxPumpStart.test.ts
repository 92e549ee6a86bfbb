// A worker's outbox pump delivers an event committed while its LISTEN was
// not yet in place: the pump's first pass runs at start, and the LISTEN
// connection opens on its own (here held back by the role's connection
// limit); an event committed between the two sent its hint to nobody, and
// the pump used to leave it to the sys.outbox cadence (60 s by default).
// It now passes again once it listens.
import pg from 'pg';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, type Client } from '../../src/client/client.js';
import { parseOutboxOptions } from '../../src/outbox/outboxOptions.js';
import { OutboxPump } from '../../src/outbox/outboxPump.js';
import { webhookSink } from '../../src/outbox/webhookSink.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { createRuntimeLogin, type RuntimeLogin } from '../helpers/runtimeLogin.js';
import { sleep, waitFor } from '../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../helpers/webhookReceiver.js';

let db: TestDatabase;
let rt: RuntimeLogin;
let runtimeUrl: string;
let receiver: WebhookReceiver;

beforeAll(async () => {
  db = await createTestDatabase();
  // Two connections at most: the pump's pool and one more.
  rt = await createRuntimeLogin(db.url, { prefix: 'wh_pump', connectionLimit: 2 });
  runtimeUrl = rt.url;
  receiver = await startWebhookReceiver('pump-secret-0123456789');
});

afterAll(async () => {
  await receiver?.close();
  await db?.drop();
  await rt?.drop();
});

it('delivers an event committed after its first pass and before its LISTEN, without waiting for the cadence', async () => {
  const pumpClient: Client = createClient({ connectionString: runtimeUrl, poolMax: 1 });
  const publisher = createClient({ connectionString: db.url });
  const blocker = new pg.Client({ connectionString: runtimeUrl });
  const errors: unknown[] = [];
  const pump = new OutboxPump(pumpClient, parseOutboxOptions({ sinks: [webhookSink({ url: receiver.url, secret: 'pump-secret-0123456789' })] }), 'test:pump', (e) => errors.push(e));
  try {
    await pumpClient.ready(); // the pool's one connection, open and idle
    await blocker.connect(); // the role's second: the LISTEN connection cannot open
    pump.start();
    await waitFor(() => errors.length, (n) => n > 0, { what: 'the LISTEN connection to be refused' });
    expect(String(errors[0])).toMatch(/too many connections/);
    await sleep(300); // the first pass (an empty outbox) is over
    const { id } = await publisher.publish('pump.test', { n: 1 }); // its hint reaches no listener
    await blocker.end(); // the listener's next attempt gets in
    await waitFor(() => receiver.accepted().length, (n) => n >= 1, { what: 'the event delivered', timeoutMs: 15_000 });
    expect(receiver.accepted()[0]!.json).toMatchObject({ id, topic: 'pump.test', payload: { n: 1 } });
  } finally {
    await pump.stop();
    await blocker.end().catch(() => undefined);
    await publisher.close();
    await pumpClient.close();
  }
});
