// A promise a test opens by hand: handlers wait on it so the test can act
// while they are provably in the middle of running.

export interface Latch {
  promise: Promise<void>;
  open(): void;
}

export function latch(): Latch {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}
