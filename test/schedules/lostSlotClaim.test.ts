// A slot claim whose answer its claimer lost (the statement committed, the
// connection broke before the rows arrived), or whose firing then failed,
// used to lock the slot until the claim lease ran out: at least 30 s, 15
// cadences of an every-2 s slot dropped after a 2.5 s network fault. The
// claimer's own live claim no longer holds it back: its next pass takes
// the slot again and fires it, once; another claimer still waits.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient, defineSchedule, Schedules, type Client } from '../../src/index.js';
import { claimSlots, fireSlots } from '../../src/db/protocol.js';
import { dueCadences } from '../../src/schedules/cadence.js';
import { NoopJob } from '../fixtures/tick-app.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';
import { backdateSlot } from '../tick/support.js';

let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [NoopJob], poolMax: 2 });
  await new Schedules(client).define(defineSchedule({ name: 'lost.claim', job: NoopJob, everyMs: 60_000 }));
  await backdateSlot(db.pool, 'lost.claim', 90);
});

afterAll(async () => {
  await client.close();
  await db.drop();
});

const claim = async (workerId: string) => (await claimSlots(db.pool, 'default', workerId, ['default'], null, 10, 30_000)).slots.map((s) => s.name);

describe('a slot claim whose answer was lost', () => {
  it('is taken again by its own claimer at once, and fired once; another claimer waits for the claim lease', async () => {
    // The answer of this claim is "lost": its claimer never fires it.
    expect(await claim('w1')).toEqual(['lost.claim']);
    expect(await claim('w2')).toEqual([]);
    const again = await claimSlots(db.pool, 'default', 'w1', ['default'], null, 10, 30_000);
    expect(again.slots.map((s) => s.name)).toEqual(['lost.claim']);
    const slot = again.slots[0]!;
    const d = dueCadences(slot, slot.nextRunAt, again.dbNow!, 1);
    const fire = { name: slot.name, expected: slot.nextRunAt, nextRunAt: d.next, cadences: d.due.map((x) => x.toISOString()) };
    expect(await fireSlots(db.pool, 'default', [fire])).toHaveLength(1);
    // Fired: the slot is no longer due, for anyone, and its cadence made one job.
    expect(await claim('w1')).toEqual([]);
    expect(await claim('w2')).toEqual([]);
    const jobs = await db.pool.query('select id from workhorse.jobs where dedupe_key like $1', ['slot:lost.claim:%']);
    expect(jobs.rowCount).toBe(1);
  });
});
