// A tick's worker errors, to the tick's log. The worker's loops (claims,
// heartbeats, settlements) report every failed try of a database fault as
// an `error` event, and the tick logged each: a server stopped for six
// seconds made 33 identical lines in one tick, and revoked grants 21 lines
// of 400 characters. Each distinct error is now logged once, when first
// seen, and how many times each came again is one line when the tick ends.
import { sqlStateOf } from '../db/sqlState.js';

/** At most this many distinct errors are remembered; later new ones are each logged (a flood of distinct ones is itself news). */
const MAX_DISTINCT = 100;

function keyOf(err: unknown): string {
  const code = sqlStateOf(err);
  const message = err instanceof Error ? err.message : String(err);
  return `${typeof code === 'string' ? code : ''}\u0000${message}`;
}

export class TickErrors {
  /** Each distinct error seen: the first of its kind, and how many more came. */
  private readonly seen = new Map<string, { first: unknown; again: number }>();

  constructor(private readonly log: (line: string, err?: unknown) => void) {}

  /** Logs `err` when it is the first of its kind in this tick; counts it otherwise. */
  error = (err: unknown): void => {
    const key = keyOf(err);
    const known = this.seen.get(key);
    if (known) {
      known.again++;
      return;
    }
    if (this.seen.size < MAX_DISTINCT) this.seen.set(key, { first: err, again: 0 });
    this.log('[workhorse] tick worker error:', err);
  };

  /** One line per error that came again, saying how often: called once, as the tick ends. */
  flush(): void {
    for (const { first, again } of this.seen.values()) {
      if (again > 0) this.log(`[workhorse] tick worker error, ${again} more time${again === 1 ? '' : 's'} in this tick:`, first);
    }
    this.seen.clear();
  }
}
