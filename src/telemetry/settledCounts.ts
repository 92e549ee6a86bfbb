// The settled counter, added once per claim batch rather than once per job:
// settlements are tallied by (type, outcome) locally and the tallies go to
// workhorse.jobs.settled when the worker claims again (and when it stops).
// Nothing is tallied while no meter provider is registered.
import type { Attributes } from '@opentelemetry/api';
import { attrsOf, meters } from './telemetry.js';

export class SettledCounts {
  private readonly counts = new Map<Attributes, number>();

  add(type: string, outcome: string): void {
    if (!meters().on) return;
    const a = attrsOf(type, outcome);
    this.counts.set(a, (this.counts.get(a) ?? 0) + 1);
  }

  flush(): void {
    if (this.counts.size === 0) return;
    const { settled } = meters();
    for (const [a, n] of this.counts) settled.add(n, a);
    this.counts.clear();
  }
}
