// Migration 008 run by an owner that may not create roles, on a cluster of
// this test's own (roles are cluster-wide, and the shared server already has
// workhorse_runtime): the migration succeeds with a WARNING and creates
// nothing; once someone with CREATEROLE creates the role, the owner's
// grant_runtime_v1() (or the next migrate) grants it, and a member logs in
// with its password and enqueues.
import pg from 'pg';
import * as z from 'zod';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClient } from '../../src/client/client.js';
import { defineJob } from '../../src/client/defineJob.js';
import { migrate } from '../../src/db/migrate.js';
import { SCHEMA_VERSION } from '../../src/db/schemaVersion.js';
import { startPasswordCluster, type PasswordCluster } from '../helpers/passwordCluster.js';

const Note = defineJob({ type: 'note', schema: z.object({ text: z.string() }) });

let cluster: PasswordCluster;

beforeAll(async () => {
  cluster = await startPasswordCluster();
  await cluster.admin(`create role wh_owner login password 'owner-password' nocreaterole`);
  await cluster.admin('create database app owner wh_owner');
});

afterAll(async () => {
  await cluster?.stop();
});

describe('migrating as an owner without CREATEROLE', () => {
  it('refuses a wrong password (the cluster really checks them)', async () => {
    const c = new pg.Client({ connectionString: cluster.url('app', 'wh_owner', 'not-the-password') });
    await expect(c.connect()).rejects.toMatchObject({ code: '28P01' });
  });

  it('migrates to the current version with a WARNING and creates no role', async () => {
    const pool = new pg.Pool({ connectionString: cluster.url('app', 'wh_owner', 'owner-password'), max: 1 });
    const notices: string[] = [];
    pool.on('connect', (c) => c.on('notice', (n) => notices.push(`${n.severity}: ${n.message}`)));
    try {
      const r = await migrate({ pool });
      expect(r.version).toBe(SCHEMA_VERSION);
      expect(r.applied).toContain(8);
    } finally {
      await pool.end();
    }
    expect(notices.join('\n')).toMatch(/WARNING: workhorse: role workhorse_runtime does not exist and wh_owner may not create roles/);
    const roles = await cluster.admin(`select count(*)::int as n from pg_roles where rolname = 'workhorse_runtime'`);
    expect(roles.rows[0].n).toBe(0);
  });

  it('grants the role once a role administrator has created it, and a member logs in and enqueues', async () => {
    await cluster.admin(`create role workhorse_runtime nologin`);
    await cluster.admin(`create role wh_app login password 'app-password' in role workhorse_runtime`);
    const app = createClient({ connectionString: cluster.url('app', 'wh_app', 'app-password'), jobs: [Note] });
    try {
      // Not granted yet: the schema is closed to the member.
      await expect(app.enqueue(Note, { text: 'too early' })).rejects.toMatchObject({ code: 'database_unavailable', cause: { code: '42501' } });
      const owner = new pg.Client({ connectionString: cluster.url('app', 'wh_owner', 'owner-password') });
      await owner.connect();
      try {
        expect((await owner.query('select workhorse.grant_runtime_v1() as granted')).rows[0].granted).toBe(true);
      } finally {
        await owner.end();
      }
      const job = await app.enqueue(Note, { text: 'hello' });
      expect(await app.getJob(job.id)).toMatchObject({ status: 'ready', payload: { text: 'hello' } });
    } finally {
      await app.close();
    }
  });
});
