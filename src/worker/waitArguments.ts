// The shapes of the durable calls' options and of spawn's job argument,
// checked before anything is written. TypeScript cannot catch a JavaScript
// caller's typo, and an unknown key was ignored: waitForSignal('paid',
// { timeout: 60_000 }) waited with no timeout at all. A wrong shape is a
// ValidationError (which fails the job without retries, as every refused
// wait does); the values themselves are checked where they are used.
import * as z from 'zod';
import { isJobDefinition, zodSchema, type JobDefinition } from '../client/defineJob.js';
import { parseField } from '../validation.js';

/** A key the call reads itself (and checks there, with its own message). */
const any = z.unknown().optional();
const signalOptions = z.object({ timeoutMs: any, schema: zodSchema.optional(), key: any }).strict();
const decisionOptions = z.object({ choices: any, prompt: any, timeoutMs: any }).strict();
const joinOptions = z.object({ mode: any }).strict();
const spawnDetached = z.boolean().optional();
const spawnJob = z.union([z.string(), z.custom<JobDefinition>(isJobDefinition)], { error: 'job must be a job type name or a defineJob() definition' });

/** Checks a call's options object (undefined is no options): its keys, and what the call cannot check later. */
function check(schema: z.ZodType, options: unknown, what: string): void {
  parseField(schema.optional(), options, 'options', what);
}

export function checkSignalOptions(name: string, options: unknown): void {
  check(signalOptions, options, `waitForSignal "${name}"`);
}

export function checkDecisionOptions(name: string, options: unknown): void {
  check(decisionOptions, options, `waitForDecision "${name}"`);
}

export function checkJoinOptions(name: string, options: unknown): void {
  check(joinOptions, options, `join "${name}"`);
}

export function checkSpawnArguments(name: string, job: unknown, detached: unknown): void {
  parseField(spawnJob, job, 'job', `spawn "${name}"`);
  parseField(spawnDetached, detached, ['options', 'detached'], `spawn "${name}"`);
}
