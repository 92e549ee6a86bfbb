// The secret-resolving environment of a Lambda handler, built from the
// process environment (or the one given): Secrets Manager is the source, with
// the endpoint, maximum age and refresh interval from src/config.ts.
import { loadRuntimeEnvironment } from '../config.js';
import { SecretEnvironment } from './secretEnvironment.js';
import { secretsManagerSource } from './secretsManager.js';

/** What an invocation keeps beyond a secret read that does not answer, to return its error. */
const SECRET_READ_MARGIN_MS = 500;

/**
 * How long a secret read may take in an invocation with `remainingMs` left:
 * that less the margin (unbounded when the time left is unknown).
 */
export function secretReadBoundMs(remainingMs: unknown): number | undefined {
  return typeof remainingMs === 'number' && Number.isFinite(remainingMs) ? remainingMs - SECRET_READ_MARGIN_MS : undefined;
}

export interface LambdaEnvironmentOptions {
  /** The environment to read (defaults to the process's). */
  env?: Record<string, string | undefined>;
  log?: (line: string, err: unknown) => void;
}

export function lambdaEnvironment(options: LambdaEnvironmentOptions = {}): SecretEnvironment {
  const { env, secrets } = loadRuntimeEnvironment(options.env);
  return new SecretEnvironment(env, {
    references: secrets.references,
    source: () => secretsManagerSource({ endpoint: secrets.endpoint }),
    maxAgeMs: secrets.maxAgeMs,
    minRefreshMs: secrets.minRefreshMs,
    log: options.log ?? ((line, err) => console.error(line, err)),
  });
}
