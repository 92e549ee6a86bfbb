// Fires the slots a claim leased: computes each slot's due cadences against
// the database clock (at most `catchupLimit`, the most recent), then one
// fire_slots_v1 call enqueues their jobs under per-cadence dedupe keys and
// moves each slot on. Shared by the tick and the long-lived schedule runner.
import type { ClaimedSlot, Protocol, Queryable, SlotFire } from '../db/protocol.js';
import { dueCadences } from './cadence.js';

/** Returns how many jobs the cadences created (an already-fired cadence creates none). */
export async function fireClaimedSlots(
  protocol: Protocol,
  db: Queryable,
  namespace: string,
  slots: ClaimedSlot[],
  dbNow: Date,
  catchupLimit: number,
  onError: (err: unknown) => void,
): Promise<number> {
  const fires: SlotFire[] = [];
  for (const slot of slots) {
    try {
      const { due, next } = dueCadences(slot, slot.nextRunAt, dbNow, catchupLimit);
      fires.push({ name: slot.name, expected: slot.nextRunAt, nextRunAt: next, cadences: due.map((d) => d.toISOString()) });
    } catch (err) {
      // A slot whose stored cadence no longer parses stays leased until its
      // claim lease ends; the error is reported, the other slots still fire.
      onError(new Error(`schedule "${slot.name}": cannot compute its cadence: ${(err as Error).message}`, { cause: err }));
    }
  }
  if (fires.length === 0) return 0;
  const fired = await protocol.fireSlots(db, namespace, fires);
  return fired.filter((f) => f.created).length;
}
