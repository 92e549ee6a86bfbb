// What producers and people send to waiting jobs: signals (to a job, or to
// a key a wait chose), human decisions, and the list of decisions waiting
// for people. Every input is validated before anything is written; each
// call is one protocol call (sql/protocol/signals.sql).
import * as z from 'zod';
import type { Decision, PendingDecision, Protocol, Queryable } from '../db/protocol.js';
import { ConflictError, NotFoundError, ValidationError } from '../errors.js';
import { jobIdSchema, signalKeySchema, queueNameSchema, jobTypeSchema, storableName, waitNameSchema } from '../names.js';
import { storableText } from '../storable.js';
import { parseInput } from '../validation.js';
import { encodePayload } from './enqueueInput.js';

export const decisionInputSchema = z
  .object({
    choice: storableName(200),
    by: storableName(200),
    comment: storableText(z.string().max(4000)).nullish(),
  })
  .strict();
export type DecisionInput = z.input<typeof decisionInputSchema>;

export const decisionFilterSchema = z
  .object({
    queue: queueNameSchema.optional(),
    type: jobTypeSchema.optional(),
    limit: z.number().int().min(1).max(1000).default(100),
  })
  .strict();
export type DecisionFilter = z.input<typeof decisionFilterSchema>;

export interface SignalResult {
  /** delivered: the job was waiting for it and is ready now; kept: stored until its wait opens. */
  outcome: 'delivered' | 'kept';
  /** The job it went to (signalKey: null while no job waits on the key). */
  jobId: string | null;
}

export interface DurableDeps {
  protocol: Protocol;
  db: Queryable;
  namespace: string;
  maxPayloadBytes: number;
}

function payloadJson(name: string, payload: unknown, maxBytes: number): unknown {
  encodePayload(`signal "${name}"`, payload, maxBytes);
  return payload ?? null;
}

export async function signal(d: DurableDeps, id: string | number, name: string, payload: unknown): Promise<SignalResult> {
  const jobId = String(parseInput(jobIdSchema, id, 'job id'));
  const n = parseInput(waitNameSchema, name, 'signal name');
  const outcome = await d.protocol.signalJob(d.db, d.namespace, jobId, n, payloadJson(n, payload, d.maxPayloadBytes));
  switch (outcome) {
    case 'not_found':
      throw new NotFoundError(`job ${jobId} not found in namespace "${d.namespace}"`);
    case 'ended':
      throw new ConflictError(`job ${jobId} has ended; it takes no signals`);
    case 'duplicate':
      throw new ConflictError(`job ${jobId} already received signal "${n}" (or its wait already ended: timed out, or lost a race the job went on without it); a job takes one signal per name`);
    case 'not_a_signal':
      throw new ConflictError(
        `job ${jobId}'s wait "${n}" is a sleep, a decision or a join, not a signal wait: no signal resolves it (a decision is made with client.decide)`,
      );
    default:
      return { outcome, jobId };
  }
}

export async function signalKey(d: DurableDeps, key: string, name: string, payload: unknown): Promise<SignalResult> {
  const k = parseInput(signalKeySchema, key, 'signal key');
  const n = parseInput(waitNameSchema, name, 'signal name');
  const r = await d.protocol.signalKey(d.db, d.namespace, k, n, payloadJson(n, payload, d.maxPayloadBytes));
  if (r.outcome === 'duplicate') {
    throw new ConflictError(`key "${k}" already holds an unconsumed signal "${n}"; it takes the next one once a wait consumed it`);
  }
  return { outcome: r.outcome, jobId: r.jobId };
}

export async function decide(d: DurableDeps, id: string | number, name: string, input: DecisionInput): Promise<Decision> {
  const jobId = String(parseInput(jobIdSchema, id, 'job id'));
  const n = parseInput(waitNameSchema, name, 'decision name');
  const v = parseInput(decisionInputSchema, input, 'decision');
  const r = await d.protocol.decide(d.db, d.namespace, jobId, n, { choice: v.choice, by: v.by, comment: v.comment ?? null });
  switch (r.outcome) {
    case 'decided':
      return r.decision!;
    case 'invalid_choice':
      throw new ValidationError(`decision "${n}" of job ${jobId}: "${v.choice}" is not one of ${(r.choices ?? []).map((c) => `"${c}"`).join(', ')}`, [
        { path: ['choice'], message: `must be one of ${(r.choices ?? []).join(', ')}` },
      ]);
    case 'resolved':
      throw new ConflictError(`decision "${n}" of job ${jobId} was already made (or timed out, or lost a race: the job went on without it)`);
    case 'ended':
      throw new ConflictError(`job ${jobId} has ended`);
    case 'no_decision':
      throw new NotFoundError(`job ${jobId} is not waiting for a decision "${n}"`);
    default:
      throw new NotFoundError(`job ${jobId} not found in namespace "${d.namespace}"`);
  }
}

export function pendingDecisions(d: DurableDeps, filter: DecisionFilter = {}): Promise<PendingDecision[]> {
  const f = parseInput(decisionFilterSchema, filter, 'decision filter');
  return d.protocol.listDecisions(d.db, d.namespace, f);
}
