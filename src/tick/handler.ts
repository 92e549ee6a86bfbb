// createTickHandler: the Lambda handler for EventBridge scheduled events (and
// for fan-out invocations, whose payload is `{ generation }`). The tick's
// settings come from the environment, read once per container on the first
// invocation (a bad setting fails that invocation with a ConfigError), and
// from the options given here, which win. Each invocation's deadline is the
// invocation's own: now + context.getRemainingTimeInMillis().
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import * as z from 'zod';
import type { WorkhorseApp } from '../app.js';
import { loadTickEnv } from '../config.js';
import { readyBacklogEmfLine } from '../metrics/readyBacklogMetric.js';
import { parseInput } from '../validation.js';
import type { TickOptions } from './options.js';
import { runTick } from './runTick.js';
import type { TickSummary } from './summary.js';

/** The part of the Lambda context a tick reads. */
export interface TickContext {
  getRemainingTimeInMillis(): number;
  awsRequestId?: string;
  functionName?: string;
  functionVersion?: string;
}

export type TickHandler = (event: unknown, context: TickContext) => Promise<TickSummary>;

export type TickHandlerOptions = Partial<Omit<TickOptions, 'app' | 'deadline' | 'generation'>>;

/** A scheduled event carries anything; a fan-out invocation carries its generation. */
const tickEventSchema = z.looseObject({ generation: z.number().int().min(0).max(1000).optional() });

function workerIdFor(context: TickContext): string {
  const fn = context.functionName ?? hostname();
  return `tick:${fn}:${context.awsRequestId ?? randomBytes(6).toString('hex')}`.slice(0, 200);
}

export function createTickHandler(app: WorkhorseApp, options: TickHandlerOptions = {}): TickHandler {
  let fromEnv: TickHandlerOptions | undefined;
  return async (event, context) => {
    if (!fromEnv) {
      const env = loadTickEnv();
      fromEnv = { ...env.options };
      if (env.backlogMetric) {
        const ns = env.options.namespace ?? 'default';
        // One EMF line on stdout: CloudWatch Logs turns it into the metric the construct alarms on.
        fromEnv.reportBacklog = (n) => console.log(readyBacklogEmfLine(ns, n));
      }
    }
    const e = parseInput(tickEventSchema, event ?? {}, 'tick event');
    const deadline = new Date(Date.now() + context.getRemainingTimeInMillis());
    const build = context.functionVersion ? `${context.functionName ?? 'lambda'}:${context.functionVersion}` : undefined;
    return runTick({
      workerId: workerIdFor(context),
      ...(build ? { build } : {}),
      ...fromEnv,
      ...options,
      app,
      deadline,
      generation: e.generation ?? 0,
    });
  };
}
