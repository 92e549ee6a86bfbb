// Waiting at a stop for something already in flight, but not for as long as
// it may take: against a hung server (stopped, partitioned) a claim or a
// heartbeat holds on until its own bound (the lease, 3 minutes by default),
// and a stopping worker need not wait that out. What it stops waiting for
// keeps running; whatever it leaves leased is recovered once the lease
// expires, as after a crash. So, too, a handler's context call once its
// attempt is aborted: the handler gets the abort back at once.

/** Waits for `p` at most `ms`; whether it settled in time (a rejection counts as settled). */
export async function settledWithin(p: Promise<unknown> | undefined, ms: number): Promise<boolean> {
  if (!p) return true;
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([p.then(() => true, () => true), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** `p`'s value, or undefined as soon as `signal` aborts (`p` goes on; its failure is ignored then). */
export function unlessAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  return orOnAbort<T, undefined>(p, signal, () => Promise.resolve(undefined));
}

/**
 * `p`, or the abort's reason once `signal` is aborted, whichever comes
 * first: a handler's database call against a frozen server gives the
 * handler back its abort (a timeout, a lost lease) at once instead of when
 * the call's own bound ends. The call itself still ends by that bound.
 */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return orOnAbort<T, never>(p, signal, () => Promise.reject(signal.reason));
}

/** `p`, or `ifAborted()` as soon as `signal` aborts (`p` goes on; its failure is ignored then). */
function orOnAbort<T, U>(p: Promise<T>, signal: AbortSignal, ifAborted: () => Promise<U>): Promise<T | U> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return ifAborted();
  }
  return new Promise<T | U>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => undefined);
      ifAborted().then(resolve, reject);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(err);
      },
    );
  });
}
