// The Lambda sink: invokes a function asynchronously (InvocationType
// "Event") with the event as its JSON payload; Lambda answering 202 is a
// delivery. The SDK client is loaded on first use (a dynamic import), so a
// bundle that never delivers to Lambda does not load it.
import type { LambdaClient, LambdaClientConfig } from '@aws-sdk/client-lambda';
import * as z from 'zod';
import { lambdaFunctionNameSchema } from '../names.js';
import { parseConfig } from '../validation.js';
import { eventBody, type Sink } from './sink.js';
import { awsEndpointSchema, awsRegionSchema } from './awsSinkOptions.js';
import { sinkTopicsSchema } from './sinkOptions.js';
import { awsCall, ONE_REQUEST_PER_ATTEMPT } from './awsSinkCalls.js';

const lambdaSinkSchema = z
  .object({
    functionName: lambdaFunctionNameSchema('functionName'),
    topics: sinkTopicsSchema.optional(),
    /** A client to invoke with; else one is built from `region`/`endpoint` and the environment. */
    client: z.custom<LambdaClient>((v) => typeof v === 'object' && v !== null && 'send' in v, 'client must be a LambdaClient').optional(),
    region: awsRegionSchema.optional(),
    /** A different Lambda endpoint (a local emulator). */
    endpoint: awsEndpointSchema.optional(),
  })
  .strict();

export type LambdaSinkOptions = z.input<typeof lambdaSinkSchema>;

export function lambdaSink(options: LambdaSinkOptions): Sink {
  const o = parseConfig(lambdaSinkSchema, options, 'lambdaSink options');
  let client: Promise<{ lambda: LambdaClient; Invoke: typeof import('@aws-sdk/client-lambda').InvokeCommand }> | undefined;
  const load = () =>
    (client ??= import('@aws-sdk/client-lambda').then((m) => {
      const config: LambdaClientConfig = { ...ONE_REQUEST_PER_ATTEMPT, ...(o.region ? { region: o.region } : {}), ...(o.endpoint ? { endpoint: o.endpoint } : {}) };
      return { lambda: o.client ?? new m.LambdaClient(config), Invoke: m.InvokeCommand };
    }));
  return {
    name: `lambda ${o.functionName}`,
    ...(o.topics ? { topics: o.topics } : {}),
    async deliver(event, signal) {
      const { lambda, Invoke } = await load();
      const r = await awsCall(() =>
        lambda.send(new Invoke({ FunctionName: o.functionName, InvocationType: 'Event', Payload: new TextEncoder().encode(eventBody(event)) }), { abortSignal: signal }),
      );
      if (r.StatusCode !== 202) throw new Error(`Lambda answered ${r.StatusCode ?? 'no status'}${r.FunctionError ? `: ${r.FunctionError}` : ''}`);
    },
  };
}
