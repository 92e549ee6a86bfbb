// Reads secret strings from AWS Secrets Manager (GetSecretValue, the
// AWSCURRENT version) through @aws-sdk/client-secrets-manager, which the
// Node.js Lambda runtime provides. The SDK is imported on the first read,
// so a function none of whose variables is a secret never loads it; one
// client per region (taken from the ARN) lives as long as the container, so
// its connections are reused. `endpoint` overrides the service endpoint
// (tests, local stacks); credentials and the rest come from the SDK's
// defaults (on Lambda, the function's role).
import type { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';

/** Where secret values come from: Secrets Manager, or anything a test provides. */
export interface SecretSource {
  /** The secret's current string value. */
  read(arn: string): Promise<string>;
}

export interface SecretsManagerSourceOptions {
  endpoint?: string;
}

/** A request that hangs must not hold an invocation until its time limit. */
const REQUEST_TIMEOUT_MS = 5_000;
const CONNECTION_TIMEOUT_MS = 2_000;
/**
 * One read, the SDK's retries included, ends by then. The handler's
 * requestTimeout alone only logs a warning in the SDK's HTTP handler; an
 * abort signal ends the call whatever the handler does.
 */
export const READ_TIMEOUT_MS = 8_000;

type Sdk = typeof import('@aws-sdk/client-secrets-manager');

export function secretsManagerSource(options: SecretsManagerSourceOptions = {}): SecretSource {
  let sdk: Promise<Sdk> | undefined;
  const clients = new Map<string, SecretsManagerClient>();
  const client = (m: Sdk, region: string): SecretsManagerClient => {
    let c = clients.get(region);
    if (!c) {
      c = new m.SecretsManagerClient({
        region,
        ...(options.endpoint ? { endpoint: options.endpoint } : {}),
        requestHandler: { requestTimeout: REQUEST_TIMEOUT_MS, connectionTimeout: CONNECTION_TIMEOUT_MS },
      });
      clients.set(region, c);
    }
    return c;
  };
  return {
    async read(arn) {
      sdk ??= import('@aws-sdk/client-secrets-manager').catch((err: unknown) => {
        sdk = undefined;
        throw err;
      });
      const m = await sdk;
      // arn:<partition>:secretsmanager:<region>:<account>:secret:<name>
      const region = arn.split(':')[3]!;
      const out = await client(m, region)
        .send(new m.GetSecretValueCommand({ SecretId: arn }), { abortSignal: AbortSignal.timeout(READ_TIMEOUT_MS) })
        .catch((err: unknown) => {
          if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError'))
            throw new Error(`Secrets Manager did not answer within ${READ_TIMEOUT_MS} ms`, { cause: err });
          throw err;
        });
      if (typeof out.SecretString !== 'string') throw new Error('the secret has no string value (binary secrets are not supported)');
      return out.SecretString;
    },
  };
}
