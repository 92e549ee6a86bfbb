// dead_worker's missedHeartbeats is at most 7: recovery marks a worker dead
// after 7 missed heartbeats, and the rule reports a dead worker whatever its
// threshold, so a larger count would silently alert at 7 instead. Such a
// threshold is refused when the option is parsed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { evaluateAlerts } from '../../src/alerts/alertsSlot.js';
import { parseAlertsOptions } from '../../src/alerts/alertsOptions.js';
import { Client } from '../../src/client/client.js';
import { ConfigError } from '../../src/errors.js';
import { Worker } from '../../src/worker/worker.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = new Client({ connectionString: db.url });
});
afterAll(async () => {
  await client.close();
  await db.drop();
});

describe('dead_worker missedHeartbeats', () => {
  it('a worker silent for 8 heartbeats is marked dead by recovery and reported at any threshold that can be set', async () => {
    await db.pool.query(
      `insert into workhorse.worker_registry (namespace, id, heartbeat_ms, state, last_seen)
       values ('default', 'silent', 1000, 'active', now() - interval '8 seconds')`,
    );
    await client.admin.recoverExpired();
    const state = await db.pool.query<{ state: string }>("select state from workhorse.worker_registry where id = 'silent'");
    expect(state.rows).toEqual([{ state: 'dead' }]);
    const { thresholds } = parseAlertsOptions({ rules: { dead_worker: { missedHeartbeats: 7 } } });
    const only = { dead_worker: thresholds.dead_worker! };
    expect(await evaluateAlerts(client, only)).toMatchObject([{ rule: 'dead_worker', key: 'silent', state: 'open' }]);
  });

  it('counts a heartbeat as missed half a heartbeat after it was due, so a live worker a little late is not reported', async () => {
    // Beats come a little later than every heartbeatMs; with a threshold of 1 a live worker flapped open and resolved.
    const only = { dead_worker: parseAlertsOptions({ rules: { dead_worker: { missedHeartbeats: 1 } } }).thresholds.dead_worker! };
    await db.pool.query(
      `insert into workhorse.worker_registry (namespace, id, heartbeat_ms, state, last_seen)
       values ('default', 'late', 10000, 'active', now() - interval '12 seconds'), ('default', 'gone', 10000, 'active', now() - interval '16 seconds')`,
    );
    try {
      const open = (await evaluateAlerts(client, only)).filter((a) => a.state === 'open').map((a) => a.key);
      expect(open).toContain('gone');
      expect(open).not.toContain('late');
    } finally {
      await db.pool.query("delete from workhorse.worker_registry where id in ('late', 'gone')");
    }
  });

  it('refuses a count above 7, naming the field', () => {
    const bad = { rules: { dead_worker: { missedHeartbeats: 10 } } };
    expect(() => parseAlertsOptions(bad)).toThrow(ConfigError);
    expect(() => parseAlertsOptions(bad)).toThrow(/rules\.dead_worker\.missedHeartbeats: at most 7/);
    expect(() => new Worker(client, { scheduleNamespaces: ['sys'], alerts: bad })).toThrow(/missedHeartbeats/);
    expect(parseAlertsOptions({ rules: { dead_worker: { missedHeartbeats: 7 } } }).thresholds.dead_worker).toEqual({ missedHeartbeats: 7 });
  });
});
