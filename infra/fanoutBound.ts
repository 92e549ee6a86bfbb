// How many ticks one burst's fan-out can run at once on the tick function.
// Every tick below the last generation invokes up to maxFanout more, so a
// burst reaches maxFanout + maxFanout² + … + maxFanout^maxGeneration extra
// ticks, not maxFanout. The construct keeps that below reservedConcurrency
// so the scheduled tick keeps a slot (a throttled schedule fires nothing),
// choosing the deepest generation that fits when the maxGeneration prop is
// not given.

/** The runtime's own default (src/tick/options.ts), the deepest the construct chooses. */
export const DEFAULT_MAX_GENERATION = 3;

/** Extra ticks one burst can start: the sum over the generations 1..maxGeneration. */
export function fanoutTicks(maxFanout: number, maxGeneration: number): number {
  let total = 0;
  for (let g = 1, n = 1; g <= maxGeneration; g++) total += n *= maxFanout;
  return total;
}

/** The deepest generation (at most DEFAULT_MAX_GENERATION) whose burst fits below `reservedConcurrency`; 0 when not even the first does. */
export function deepestFittingGeneration(maxFanout: number, reservedConcurrency: number): number {
  let g = 0;
  while (g < DEFAULT_MAX_GENERATION && fanoutTicks(maxFanout, g + 1) < reservedConcurrency) g++;
  return g;
}
