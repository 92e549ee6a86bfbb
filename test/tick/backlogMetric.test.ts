// The ready-backlog metric: a tick reports the due ready jobs of its queues
// after deregistering, and the Lambda handler turns that into one EMF line.
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { READY_BACKLOG_METRIC, NAMESPACE_DIMENSION } from '../../src/metrics/readyBacklogMetric.js';
import { runTick } from '../../src/tick/runTick.js';
import app, { SleepJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { fixtureApp, freshHandler, lambdaContext, scheduledEvent } from './support.js';

let db: TestDatabase;

beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  await db.drop();
});
afterEach(() => {
  vi.restoreAllMocks();
});

async function pausedBacklog(namespace: string, n: number): Promise<void> {
  const client = createClient({ connectionString: db.url, namespace, jobs: [SleepJob] });
  await client.enqueueMany(Array.from({ length: n }, () => ({ job: SleepJob, payload: { ms: 0 } })));
  await client.admin.pauseQueue(SleepJob.queue);
  await client.close();
}

describe('ready backlog metric', () => {
  it('reports the due ready jobs of the tick queues once per tick', async () => {
    await pausedBacklog('backlog-a', 7);
    const seen: number[] = [];
    const summary = await runTick({
      app,
      connectionString: db.url,
      namespace: 'backlog-a',
      deadline: new Date(Date.now() + 5000),
      scheduleNamespaces: [],
      reportBacklog: (n) => seen.push(n),
    });
    expect(summary.claimed).toBe(0);
    expect(seen).toEqual([7]);
  });

  it('is published by the Lambda handler as one EMF log line when WORKHORSE_BACKLOG_METRIC is on', async () => {
    await pausedBacklog('backlog-b', 4);
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    const handler = await freshHandler({
      DATABASE_URL: db.url,
      WORKHORSE_APP: fixtureApp,
      WORKHORSE_NAMESPACE: 'backlog-b',
      WORKHORSE_SCHEDULE_NAMESPACES: 'default',
      WORKHORSE_BACKLOG_METRIC: 'true',
    });
    await handler(scheduledEvent(), lambdaContext(5000));
    const emf = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((o) => READY_BACKLOG_METRIC in o);
    expect(emf).toHaveLength(1);
    expect(emf[0]![READY_BACKLOG_METRIC]).toBe(4);
    expect(emf[0]![NAMESPACE_DIMENSION]).toBe('backlog-b');
  });

  it("carries the namespace the tick worked in: createTickHandler's, not WORKHORSE_NAMESPACE's", async () => {
    await pausedBacklog('backlog-d', 3);
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    await freshHandler({ DATABASE_URL: db.url, WORKHORSE_BACKLOG_METRIC: 'true', WORKHORSE_SCHEDULE_NAMESPACES: 'default' });
    const { createTickHandler } = await import('../../src/tick/handler.js');
    await createTickHandler(app, { namespace: 'backlog-d' })(scheduledEvent(), lambdaContext(5000));
    const emf = lines.map((l) => JSON.parse(l) as Record<string, unknown>).filter((o) => READY_BACKLOG_METRIC in o);
    expect(emf.map((o) => [o[NAMESPACE_DIMENSION], o[READY_BACKLOG_METRIC]])).toEqual([['backlog-d', 3]]);
  });

  it('is not published when WORKHORSE_BACKLOG_METRIC is unset', async () => {
    await pausedBacklog('backlog-c', 2);
    const lines: string[] = [];
    vi.spyOn(console, 'log').mockImplementation((line: unknown) => void lines.push(String(line)));
    const handler = await freshHandler({
      DATABASE_URL: db.url,
      WORKHORSE_APP: fixtureApp,
      WORKHORSE_NAMESPACE: 'backlog-c',
      WORKHORSE_SCHEDULE_NAMESPACES: 'default',
    });
    const summary = await handler(scheduledEvent(), lambdaContext(5000));
    expect(summary.claimed).toBe(0);
    expect(lines.filter((l) => l.includes(READY_BACKLOG_METRIC))).toEqual([]);
  });
});
