// The schedules API: define (create or change), list, get, enable, disable
// and delete recurring slots in the client's namespace. Each method is one
// or two protocol calls; firing is left to the workers that opt in. Like
// every client call, each first asks client.ready(): a closed client is a
// ClientClosedError and an unmigrated database a SchemaVersionError.
import type { Client } from '../client/client.js';
import { assertClient } from '../client/notAClient.js';
import { ConfigError, NotFoundError, ValidationError } from '../errors.js';
import type { ScheduledJob, ScheduleRecord } from '../db/protocol.js';
import { parseInput } from '../validation.js';
import { refuseNameTwins } from './appSchedules.js';
import { firstRunAfter } from './cadence.js';
import { isScheduleDefinition, scheduleNameSchema, SYSTEM_PREFIX, type ScheduleDefinition } from './defineSchedule.js';
import { startingFrom, toScheduleRow } from './scheduleRow.js';

export type { ScheduledJob, ScheduleRecord };

export class Schedules {
  constructor(private readonly client: Client) {
    assertClient(client, 'Schedules');
  }

  private get ns(): string {
    return this.client.namespace;
  }

  /**
   * Creates or changes slots (from defineSchedule values). A changed cadence
   * restarts at its next occurrence; an unchanged slot is left as it is.
   * Returns the stored records, in the order given.
   */
  async define(defs: ScheduleDefinition | ScheduleDefinition[]): Promise<ScheduleRecord[]> {
    const list = Array.isArray(defs) ? defs : [defs];
    list.forEach((d, i) => {
      if (isScheduleDefinition(d)) return;
      const message = 'a schedule must be a defineSchedule() value';
      const path = Array.isArray(defs) ? [i] : [];
      throw new ConfigError(`invalid schedules: ${path.length ? `${i}: ` : ''}${message}`, [{ path, message }]);
    });
    refuseNameTwins(list, 'schedules', []);
    // The same definition given twice is stored once (one row may be upserted once per statement).
    const unique = [...new Map(list.map((d) => [d.name, d])).values()];
    const resolve = (t: string) => this.client.definition(t);
    // Checked before anything is asked of the database; stored with first runs from the database's clock.
    const checked = unique.map((d) => toScheduleRow(d, resolve, this.client.maxPayloadBytes));
    await this.client.ready();
    const now = await this.client.protocol.databaseNow(this.client.calls);
    const rows = checked.map((r) => startingFrom(r, now));
    await this.client.protocol.upsertSchedules(this.client.calls, this.ns, rows);
    const stored = new Map((await this.client.protocol.listSchedules(this.client.calls, this.ns)).map((r) => [r.name, r]));
    return list.map((d) => stored.get(d.name)!);
  }

  async list(): Promise<ScheduleRecord[]> {
    await this.client.ready();
    return this.client.protocol.listSchedules(this.client.calls, this.ns);
  }

  async get(name: string): Promise<ScheduleRecord> {
    const n = parseInput(scheduleNameSchema, name, 'schedule name');
    await this.client.ready();
    const r = await this.client.protocol.getSchedule(this.client.calls, this.ns, n);
    if (!r) throw new NotFoundError(`schedule "${n}" not found in namespace "${this.ns}"`);
    return r;
  }

  /** Enables a slot. One that was disabled restarts at its next cadence: no backlog fires. */
  async enable(name: string): Promise<ScheduleRecord> {
    const current = await this.get(name);
    const next = firstRunAfter(current, await this.client.protocol.databaseNow(this.client.calls));
    await this.client.protocol.setScheduleEnabled(this.client.calls, this.ns, current.name, true, next);
    return this.get(name);
  }

  async disable(name: string): Promise<ScheduleRecord> {
    const n = parseInput(scheduleNameSchema, name, 'schedule name');
    await this.client.ready();
    if (!(await this.client.protocol.setScheduleEnabled(this.client.calls, this.ns, n, false, null))) {
      throw new NotFoundError(`schedule "${n}" not found in namespace "${this.ns}"`);
    }
    return this.get(n);
  }

  /**
   * Deletes a slot; jobs it already enqueued are left alone. A built-in
   * `sys.*` slot is refused: the ticks and workers that fire the `sys`
   * namespace store it at their start, so a delete only stopped it until
   * the next one started. `disable` stops it for good.
   */
  async delete(name: string): Promise<void> {
    const n = parseInput(scheduleNameSchema, name, 'schedule name');
    if (n.startsWith(SYSTEM_PREFIX)) {
      const message = `it is a built-in slot, stored again by every tick and worker that fires the sys namespace; disable it instead`;
      throw new ValidationError(`cannot delete schedule "${n}": ${message}`, [{ path: [], message }]);
    }
    await this.client.ready();
    if (!(await this.client.protocol.deleteSchedule(this.client.calls, this.ns, n))) {
      throw new NotFoundError(`schedule "${n}" not found in namespace "${this.ns}"`);
    }
  }
}
