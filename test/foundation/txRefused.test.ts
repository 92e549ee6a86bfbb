// A call made in the caller's transaction (`tx`) that the transaction itself
// refuses is a ValidationError at `tx` saying what to do: a transaction
// aborted by an earlier failed statement (25P02) and a pg client that was
// released or closed gave the raw driver or PostgreSQL error of a statement
// the caller never wrote. Nothing is written either way.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createClient, defineJob, ValidationError, type Client } from '../../src/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

const Note = defineJob({ type: 'txref.note', schema: z.object({}) });
let db: TestDatabase;
let client: Client;

beforeAll(async () => {
  db = await createTestDatabase();
  client = createClient({ connectionString: db.url, jobs: [Note] });
});
afterAll(async () => {
  await client?.close();
  await db?.drop();
});

const count = async (table: string) => (await db.pool.query<{ n: number }>(`select count(*)::int n from workhorse.${table}`)).rows[0]!.n;

describe('a tx the transaction refuses', () => {
  it('is a ValidationError at tx for an aborted transaction, for enqueue, enqueueMany and publish', async () => {
    const tx = await db.pool.connect();
    try {
      await tx.query('begin');
      await tx.query('select 1/0').catch(() => undefined);
      const calls = [
        () => client.enqueue(Note, {}, { tx }),
        () => client.enqueueMany([{ job: Note, payload: {} }], { tx }),
        () => client.publish('t.x', {}, { tx }),
      ];
      for (const call of calls) {
        const err = await call().catch((e: unknown) => e);
        expect(err).toBeInstanceOf(ValidationError);
        expect((err as Error).message).toMatch(/: the transaction given as tx is aborted \(an earlier statement in it failed\): roll it back/);
        expect((err as ValidationError).issues[0]!.path).toEqual(['tx']);
        expect(((err as Error).cause as { code?: string }).code).toBe('25P02');
      }
      await tx.query('rollback');
    } finally {
      tx.release();
    }
    expect([await count('jobs'), await count('outbox_events')]).toEqual([0, 0]);
  });

  it('is a ValidationError at tx for a pg client that was closed', async () => {
    const closed = new pg.Client({ connectionString: db.url });
    await closed.connect();
    await closed.end();
    const err = await client.enqueue(Note, {}, { tx: closed }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toMatch(/^enqueue: tx is a pg client that was closed or released/);
  });

  it('is a ValidationError at tx for an object that is not a node-postgres client', async () => {
    // Another driver's transaction object answers with rows alone (an array), or its query() throws at once.
    const rowsOnly = { query: async () => [] };
    const throwsAtOnce = {
      query() {
        throw new TypeError('boom');
      },
    };
    const cases: [string, () => Promise<unknown>, RegExp][] = [
      ['enqueue', () => client.enqueue(Note, {}, { tx: rowsOnly as never }), /^enqueue: tx.query\(\) answered an array, not a node-postgres result with rows: pass a pg Client/],
      ['enqueueMany', () => client.enqueueMany([{ job: Note, payload: {} }], { tx: { query: async () => 42 } as never }), /^enqueueMany: tx.query\(\) answered number/],
      ['publish', () => client.publish('t.x', {}, { tx: throwsAtOnce as never }), /^publish: tx.query\(\) threw \(boom\)/],
    ];
    for (const [call, run, message] of cases) {
      const err = await run().catch((e: unknown) => e);
      expect(err, call).toBeInstanceOf(ValidationError);
      expect((err as Error).message, call).toMatch(message);
      expect((err as ValidationError).issues[0]!.path, call).toEqual(['tx']);
    }
    expect([await count('jobs'), await count('outbox_events')]).toEqual([0, 0]);
  });
});
