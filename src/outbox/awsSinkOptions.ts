// Option schemas the AWS sinks share (lambdaSink, eventBridgeSink): a region
// and an endpoint the SDK can build a request from. The SDK checks neither
// when the client is made, only at each call, so a typo there made every
// delivery fail and every event end dead; refused when the sink is built.
import * as z from 'zod';
import { isHttpUrl } from './sinkOptions.js';

/**
 * A region: what the SDK puts in a host name (one DNS label: letters,
 * digits and "-", not at either end), so "us-east-1" and an emulator's
 * "local" pass and "not a region" does not.
 */
export const awsRegionSchema = z
  .string()
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/, 'region must be an AWS region name such as "us-east-1" (letters, digits and "-")');

/** A different endpoint (a local emulator, a VPC endpoint): an http(s) URL. */
export const awsEndpointSchema = z.string().refine(isHttpUrl, 'endpoint must be an http(s) URL');
