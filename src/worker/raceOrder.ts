// The order in which waits opened together (a Promise.race or Promise.all
// of them) return when several are resolved: the first resolved first, as
// recorded, and in a tie the one the handler opened first. A wait that was
// satisfied the moment it opened (a sleep of 0, a signal kept from before)
// is recorded resolved at its own opening, and the waits of one batch open
// on separate connections, in whatever order the database takes them: a
// sleep(0) raced against a kept signal returned the signal about one run in
// eight, though the handler opened the sleep first. So every resolution
// time within the batch's own openings counts as one instant, the end of
// those openings, and the handler's order decides among them; an event
// from before the batch opened (a sleepUntil in the past) still comes first.

/** One resolved wait of a batch: when it resolved, when it opened (ms since the epoch), and its place in the handler's calls. */
export interface RaceEntry {
  at: number;
  started: number;
  seq: number;
}

/** When `e` resolved, for ordering the batch: an instant within the batch's openings counts as their end. */
function instant(e: RaceEntry, from: number, to: number): number {
  return e.at >= from && e.at <= to ? to : e.at;
}

/** How many of the batch's resolved waits return before `mine`. */
export function raceTurn(mine: RaceEntry, batch: readonly RaceEntry[]): number {
  const from = Math.min(...batch.map((e) => e.started));
  const to = Math.max(...batch.map((e) => e.started));
  const at = instant(mine, from, to);
  return batch.filter((e) => {
    const other = instant(e, from, to);
    return other < at || (other === at && e.seq < mine.seq);
  }).length;
}
