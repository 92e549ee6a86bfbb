// The credentials the HTTP app accepts, as configured: bearer tokens, each
// with a name (for messages and logs, never the token itself) and its
// scopes. Parsed with zod by src/config.ts (WORKHORSE_API_TOKENS,
// WORKHORSE_API_TOKEN) and by createApp; a token listed twice is refused.
import * as z from 'zod';
import { ConfigError } from '../errors.js';
import { SCOPES, scopeSchema, type Scope } from './scopes.js';

export const secretSchema = z.string().min(16, 'a secret must be at least 16 characters');

/**
 * A bearer token: a secret that also travels in an HTTP header, so one that
 * no header can carry as the token (a space, a tab or newline, a control
 * character, a character past U+00FF) would be refused on every request.
 */
export const bearerTokenSchema = secretSchema.refine(
  (t) => !/[\s\u0000-\u001f\u007f]|[^\u0000-\u00ff]/.test(t),
  'a bearer token must not contain spaces, control characters or characters past U+00FF: no Authorization header can carry it (check for a stray space or newline)',
);

export const apiTokenSchema = z
  .object({
    /** Shown in 403 messages; defaults to "token <n>". */
    name: z
      .string()
      .regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'a token name is 1-64 characters of letters, digits, "_", ".", ":" or "-"')
      .optional(),
    token: bearerTokenSchema,
    scopes: z.array(scopeSchema).min(1, 'give at least one scope'),
  })
  .strict();

export type ApiTokenInput = z.input<typeof apiTokenSchema>;

export interface ApiToken {
  name: string;
  token: string;
  scopes: Scope[];
}

export const apiTokensSchema = z
  .array(apiTokenSchema)
  .max(100)
  .transform((tokens): ApiToken[] => tokens.map((t, i) => ({ name: t.name ?? `token-${i + 1}`, token: t.token, scopes: [...new Set(t.scopes)] })));

/**
 * Every accepted token: the all-scopes one (WORKHORSE_API_TOKEN / `apiToken`,
 * named after its source) first, then the scoped ones. A token or a name
 * used twice is a ConfigError naming `where`.
 */
export function combineTokens(allScopes: string | undefined, scoped: ApiToken[], allScopesName: string, where: string): ApiToken[] {
  const tokens = [...(allScopes ? [{ name: allScopesName, token: allScopes, scopes: [...SCOPES] }] : []), ...scoped];
  const problem =
    new Set(tokens.map((t) => t.token)).size !== tokens.length
      ? 'the same token is configured twice'
      : new Set(tokens.map((t) => t.name)).size !== tokens.length
        ? 'two tokens share a name'
        : undefined;
  if (problem) throw new ConfigError(`invalid ${where}: ${problem}`, [{ path: [where], message: problem }]);
  return tokens;
}
