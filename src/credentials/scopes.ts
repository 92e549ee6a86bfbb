// The scopes a credential can carry, and so the permissions a route can ask
// for. Every API route declares the one scope it needs (`guard(scope)` in
// its resource module); a credential without it gets 403 and nothing runs.
// To add a scope (say `decide`, for a human-decision API), append it here,
// guard the new routes with it and document it in the README's scope table:
// a token configured with `WORKHORSE_API_TOKEN` holds every scope listed.
import * as z from 'zod';

export const SCOPES = [
  /** Read jobs (payloads and results included), queues, workers and schedules. */
  'read',
  /** Enqueue jobs. */
  'enqueue',
  /** Operator actions: cancel and retry jobs, pause and resume queues and workers. */
  'admin',
  /** Human decisions: list the decisions waiting for people and make them. */
  'decide',
  /** Send signals to waiting jobs (by job id or by key), e.g. from a webhook. */
  'signal',
] as const;

export type Scope = (typeof SCOPES)[number];

export const scopeSchema = z.enum(SCOPES, { error: `a scope is one of ${SCOPES.join(', ')}` });
