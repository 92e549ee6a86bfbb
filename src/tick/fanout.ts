// Fan-out: when the ready backlog is more than this tick can finish, invoke
// more ticks asynchronously (Lambda InvocationType "Event"). The payload is
// only `{ generation }`; a tick of generation >= maxGeneration never fans
// out, so a burst spreads over at most maxFanout + maxFanout² + … +
// maxFanout^maxGeneration extra ticks and cannot recurse without bound. The invocations are given up when `signal`
// aborts (the tick passes its abort instant), so a Lambda API that does not
// answer (a VPC without a route to it) cannot hold the tick past its
// deadline. The SDK is loaded only by a tick that may fan out, as it starts.
import type { LambdaClient } from '@aws-sdk/client-lambda';

export interface FanoutEstimate {
  /** Ready jobs this tick could claim, counted after its first batch. */
  backlog: number;
  concurrency: number;
  /** How long the first batch took to run and settle. */
  batchMs: number;
  /** Time left before this tick stops claiming. */
  msUntilClose: number;
  /** Claiming time of a whole tick (closeAt - start). */
  tickSpanMs: number;
  maxFanout: number;
}

/** Jobs a tick with `spanMs` of claiming time finishes, at the measured batch pace. */
function capacity(concurrency: number, batchMs: number, spanMs: number): number {
  return concurrency * Math.max(0, Math.floor(spanMs / Math.max(batchMs, 1)));
}

/** How many further ticks to invoke: enough for the excess backlog, at most maxFanout. */
export function fanoutCount(e: FanoutEstimate): number {
  const excess = e.backlog - capacity(e.concurrency, e.batchMs, e.msUntilClose);
  if (excess <= 0 || e.maxFanout <= 0) return 0;
  const perTick = Math.max(e.concurrency, capacity(e.concurrency, e.batchMs, e.tickSpanMs));
  return Math.min(e.maxFanout, Math.ceil(excess / perTick));
}

/** The backlog count's cap: one more than any count that changes the answer. */
export function backlogCap(e: Omit<FanoutEstimate, 'backlog'>): number {
  const perTick = Math.max(e.concurrency, capacity(e.concurrency, e.batchMs, e.tickSpanMs));
  return Math.min(1_000_000, capacity(e.concurrency, e.batchMs, e.msUntilClose) + perTick * e.maxFanout + 1);
}

export interface InvokeTicks {
  functionName: string;
  /** The generation of the ticks invoked. */
  generation: number;
  count: number;
  lambda?: LambdaClient;
  endpoint?: string;
  /** Gives up the invocations still in flight when it aborts. */
  signal?: AbortSignal;
}

let lambdaSdk: Promise<typeof import('@aws-sdk/client-lambda')> | undefined;

/**
 * The Lambda SDK, loaded once per process. Loading it is 100-150 ms of
 * synchronous work that blocks the event loop: a tick that may fan out
 * loads it as it starts (runTick.ts), before any handler runs. Loaded in the
 * middle of a short tick it held the heartbeats and settlements past their
 * bounds, and the tick failed blaming the database.
 */
export function loadLambdaSdk(): Promise<typeof import('@aws-sdk/client-lambda')> {
  lambdaSdk ??= import('@aws-sdk/client-lambda');
  return lambdaSdk;
}

/** Whether a tick with these options may fan out (and should load the SDK before its handlers run). */
export function mayFanOut<O extends { maxFanout: number; fanoutFunction?: string; generation: number; maxGeneration: number }>(
  o: O,
): o is O & { fanoutFunction: string } {
  return o.maxFanout > 0 && o.fanoutFunction !== undefined && o.generation < o.maxGeneration;
}

/** Invokes `count` ticks; `accepted` counts the invocations Lambda queued (HTTP 202). */
export async function invokeTicks(o: InvokeTicks): Promise<{ accepted: number; errors: unknown[] }> {
  if (o.count <= 0) return { accepted: 0, errors: [] };
  const { LambdaClient: Client, InvokeCommand } = await loadLambdaSdk();
  // One try per invocation: a throttled or failed fan-out is not worth the tick's time (the SDK's backoff for a
  // throttle held the tick up to its abort instant), and the next tick fans out again if the backlog is still there.
  const lambda = o.lambda ?? new Client({ maxAttempts: 1, ...(o.endpoint ? { endpoint: o.endpoint } : {}) });
  try {
    const payload = new TextEncoder().encode(JSON.stringify({ generation: o.generation }));
    const results = await Promise.allSettled(
      Array.from({ length: o.count }, () =>
        lambda.send(new InvokeCommand({ FunctionName: o.functionName, InvocationType: 'Event', Payload: payload }), { abortSignal: o.signal }),
      ),
    );
    return {
      accepted: results.filter((r) => r.status === 'fulfilled' && r.value.StatusCode === 202).length,
      errors: results.filter((r): r is PromiseRejectedResult => r.status === 'rejected').map((r) => r.reason),
    };
  } finally {
    if (!o.lambda) lambda.destroy();
  }
}
