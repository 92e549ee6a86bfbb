// Why a value given where a Client belongs is not one. The usual reason
// beside a wrong argument: the value is a Client of another copy of
// workhorse (an application importing dist/ beside a CLI or a test running
// the TypeScript sources, or two installed versions), whose class this copy
// cannot take as its own; the message says so instead of claiming the value
// did not come from createClient().
import { ConfigError } from '../errors.js';
import { Client } from './client.js';

/** Undefined for a Client of this copy; otherwise what is wrong, for a ConfigError. */
export function notAClient(v: unknown): string | undefined {
  if (v instanceof Client) return undefined;
  const name = typeof v === 'object' && v !== null ? (Object.getPrototypeOf(v) as { constructor?: { name?: unknown } } | null)?.constructor?.name : undefined;
  if (name === 'Client' && typeof (v as { enqueue?: unknown }).enqueue === 'function') {
    return 'the client comes from another copy of workhorse than this code (say, one imported from dist/ and one from src/, or two installed versions): import both from the same place';
  }
  return 'expected the client createClient() returns';
}

/** A ConfigError unless `v` is a Client of this copy: `who` (say, "a Worker") needs one as its first argument. */
export function assertClient(v: unknown, who: string): asserts v is Client {
  const wrong = notAClient(v);
  if (wrong) throw new ConfigError(`${who} needs a workhorse Client as its first argument: ${wrong}`, [{ path: ['client'], message: wrong }]);
}
