// What the certification passes to each worker or tick child process (as
// one JSON argument), validated on arrival like any other boundary.
import * as z from 'zod';
import { parseConfig } from '../src/validation.js';

export const childConfigSchema = z
  .object({
    url: z.string().min(1),
    namespace: z.string().min(1),
    executors: z.number().int().min(1),
    heartbeatMs: z.number().int().min(50),
    tickMs: z.number().int().min(500),
  })
  .strict();

export type ChildConfig = z.output<typeof childConfigSchema>;

export function readChildConfig(argv: string[]): ChildConfig {
  return parseConfig(childConfigSchema, JSON.parse(argv[2] ?? '{}'), 'certify child config');
}

/**
 * Connections a child's pool may open: one per handler (steps), plus
 * settlement and heartbeat, capped at 9. With the default 8 workers, each
 * also holding a LISTEN connection, and a replacement starting while a
 * killed worker's backends are still exiting, that stays under PostgreSQL's
 * default max_connections of 100; at 12 a default run hit "too many clients"
 * (those handlers failed and were retried, guarantees intact).
 */
export function childPoolSize(executors: number): number {
  return Math.min(executors + 1, 9);
}
