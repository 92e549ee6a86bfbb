// Polling helper for tests: waits for a condition with a bounded timeout and
// fails with the last observed value instead of hanging.

export async function waitFor<T>(
  probe: () => Promise<T> | T,
  done: (v: T) => boolean,
  { timeoutMs = 20_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const start = Date.now();
  let last: T = await probe();
  while (!done(last)) {
    if (Date.now() - start > timeoutMs) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}; last value: ${JSON.stringify(last)}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
    last = await probe();
  }
  return last;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
