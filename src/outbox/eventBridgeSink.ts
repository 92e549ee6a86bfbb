// The EventBridge sink: PutEvents with one entry per event on the given
// bus: Source (default "workhorse"), DetailType = the topic, Detail = the
// event as JSON (its id included, for the target to deduplicate). An entry
// EventBridge reports failed is a failed delivery. The SDK client is loaded
// on first use (a dynamic import).
import type { EventBridgeClient, EventBridgeClientConfig } from '@aws-sdk/client-eventbridge';
import * as z from 'zod';
import { parseConfig } from '../validation.js';
import { eventBody, type Sink } from './sink.js';
import { awsEndpointSchema, awsRegionSchema } from './awsSinkOptions.js';
import { sinkTopicsSchema } from './sinkOptions.js';
import { awsCall, ONE_REQUEST_PER_ATTEMPT } from './awsSinkCalls.js';

/** What PutEvents takes as EventBusName: a bus name or its ARN (EventBridge's own pattern for it). */
const EVENT_BUS = /^(arn:aws[\w-]*:events:[a-z]{2}-[a-z]+-[\w-]+:[0-9]{12}:event-bus\/)?[/.\-_A-Za-z0-9]+$/;

const eventBridgeSinkSchema = z
  .object({
    eventBusName: z
      .string()
      .min(1)
      .max(1600)
      .regex(EVENT_BUS, 'eventBusName must be an event bus name (letters, digits and "/", ".", "-", "_") or an event bus ARN')
      // A bus is named with at most 256 characters, so a longer name matches no bus.
      .refine((b) => b.replace(/^arn:[^/]*\//, '').length <= 256, 'eventBusName names a bus of at most 256 characters: no bus has a longer name'),
    /** EventBridge refuses a custom event whose source starts with "aws.": that prefix is AWS's own. */
    source: z
      .string()
      .min(1)
      .max(256)
      .refine((s) => !s.startsWith('aws.'), 'source must not start with "aws.": EventBridge keeps that prefix for AWS services')
      .default('workhorse'),
    topics: sinkTopicsSchema.optional(),
    client: z
      .custom<EventBridgeClient>((v) => typeof v === 'object' && v !== null && 'send' in v, 'client must be an EventBridgeClient')
      .optional(),
    region: awsRegionSchema.optional(),
    endpoint: awsEndpointSchema.optional(),
  })
  .strict();

export type EventBridgeSinkOptions = z.input<typeof eventBridgeSinkSchema>;

type Sdk = typeof import('@aws-sdk/client-eventbridge');

export function eventBridgeSink(options: EventBridgeSinkOptions): Sink {
  const o = parseConfig(eventBridgeSinkSchema, options, 'eventBridgeSink options');
  let loaded: Promise<{ eb: EventBridgeClient; Put: Sdk['PutEventsCommand'] }> | undefined;
  const load = () =>
    (loaded ??= import('@aws-sdk/client-eventbridge').then((m) => {
      const config: EventBridgeClientConfig = { ...ONE_REQUEST_PER_ATTEMPT, ...(o.region ? { region: o.region } : {}), ...(o.endpoint ? { endpoint: o.endpoint } : {}) };
      return { eb: o.client ?? new m.EventBridgeClient(config), Put: m.PutEventsCommand };
    }));
  return {
    name: `eventbridge ${o.eventBusName}`,
    ...(o.topics ? { topics: o.topics } : {}),
    async deliver(event, signal) {
      const { eb, Put } = await load();
      const r = await awsCall(() =>
        eb.send(new Put({ Entries: [{ EventBusName: o.eventBusName, Source: o.source, DetailType: event.topic, Detail: eventBody(event) }] }), { abortSignal: signal }),
      );
      const failed = r.Entries?.find((e) => e.ErrorCode);
      if ((r.FailedEntryCount ?? 0) > 0 || failed) {
        throw new Error(`EventBridge refused the event: ${failed?.ErrorCode ?? 'failed'}${failed?.ErrorMessage ? ` (${failed.ErrorMessage})` : ''}`);
      }
      // PutEvents answers each entry with its EventId once accepted; an answer without one (a proxy's `{}`) accepted nothing.
      if (typeof r.Entries?.[0]?.EventId !== 'string') throw new Error('EventBridge answered without an EventId for the event: not counted as delivered');
    },
  };
}
