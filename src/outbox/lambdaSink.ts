// The Lambda sink: invokes a function asynchronously (InvocationType
// "Event") with the event as its JSON payload; Lambda answering 202 is a
// delivery. The SDK client is loaded on first use (a dynamic import), so a
// bundle that never delivers to Lambda does not load it.
import type { LambdaClient, LambdaClientConfig } from '@aws-sdk/client-lambda';
import * as z from 'zod';
import { parseConfig } from '../validation.js';
import { eventBody, type Sink } from './sink.js';
import { awsEndpointSchema, awsRegionSchema } from './awsSinkOptions.js';
import { sinkTopicsSchema } from './sinkOptions.js';

/**
 * What Lambda's Invoke takes as FunctionName: a name, a partial ARN
 * (account:function:name) or a full ARN, each with an optional version or
 * alias (Lambda's own pattern for it).
 */
const FUNCTION_NAME =
  /^(arn:(aws[a-zA-Z-]*)?:lambda:)?([a-z]{2}((-gov)|(-iso([a-z]?)))?-[a-z]+-\d{1}:)?(\d{12}:)?(function:)?([a-zA-Z0-9-_.]+)(:(\$LATEST|[a-zA-Z0-9-_]+))?$/;

const lambdaSinkSchema = z
  .object({
    functionName: z
      .string()
      .min(1)
      .max(170)
      .regex(FUNCTION_NAME, 'functionName must be a Lambda function name (letters, digits, "-" and "_"), a partial ARN or an ARN, with an optional :version or :alias'),
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
      const config: LambdaClientConfig = { ...(o.region ? { region: o.region } : {}), ...(o.endpoint ? { endpoint: o.endpoint } : {}) };
      return { lambda: o.client ?? new m.LambdaClient(config), Invoke: m.InvokeCommand };
    }));
  return {
    name: `lambda ${o.functionName}`,
    ...(o.topics ? { topics: o.topics } : {}),
    async deliver(event, signal) {
      const { lambda, Invoke } = await load();
      const r = await lambda.send(
        new Invoke({ FunctionName: o.functionName, InvocationType: 'Event', Payload: new TextEncoder().encode(eventBody(event)) }),
        { abortSignal: signal },
      );
      if (r.StatusCode !== 202) throw new Error(`Lambda answered ${r.StatusCode ?? 'no status'}${r.FunctionError ? `: ${r.FunctionError}` : ''}`);
    },
  };
}
