// What the dashboard's routes need, gathered once by createApp's `/ui`
// mount from the API's own settings: the client (every read and every
// action goes through it), the configured tokens, the session secret and
// lifetime and the clock.
import type { Client } from '../../client/client.js';
import type { ApiToken } from '../../credentials/tokens.js';
import type { BodyReader } from '../bodyReader.js';

export interface UiSettings {
  client: Client;
  tokens: readonly ApiToken[];
  /** Unset: no sign-in; bearer headers still work. */
  sessionSecret: string | undefined;
  sessionTtlMs: number;
  now: () => number;
  /** Reads the small form bodies of sign-in and actions, under their own limits. */
  forms: BodyReader;
}

/**
 * Form bodies are a CSRF token and a few fields; the longest is a decision's
 * comment, up to 4,000 characters as through the API, and a character may
 * take 9 bytes URL-encoded (three UTF-8 bytes as %XX each).
 */
export const FORM_LIMITS = { maxBytes: 64 * 1024, maxConcurrent: 16, timeoutMs: 10_000 };
