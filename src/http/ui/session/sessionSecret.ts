// The shape of the dashboard's session secret (WORKHORSE_SESSION_SECRET,
// createApp's `sessionSecret`): it signs every session cookie and derives
// every CSRF token, so it is long and random, e.g. `openssl rand -hex 32`.
import { z } from 'zod';

export const sessionSecretSchema = z.string().min(32, 'a session secret must be at least 32 characters (e.g. `openssl rand -hex 32`)');
