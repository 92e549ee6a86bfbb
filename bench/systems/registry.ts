// Maps a system's flag name to its benchmark adapter.
import type { SystemName } from '../options.js';
import { GraphileSystem } from './graphile.js';
import { PgBossSystem } from './pgboss.js';
import type { QueueSystem } from './system.js';
import { WorkhorseSystem } from './workhorse.js';

export function systemFor(name: SystemName): QueueSystem {
  if (name === 'graphile') return new GraphileSystem();
  if (name === 'pgboss') return new PgBossSystem();
  return new WorkhorseSystem();
}

export const DISPLAY_NAME: Record<SystemName, string> = {
  workhorse: 'workhorse',
  graphile: 'graphile-worker',
  pgboss: 'pg-boss',
};
