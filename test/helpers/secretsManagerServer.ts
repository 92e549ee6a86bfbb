// A Secrets Manager endpoint on loopback speaking the service's JSON
// protocol (POST /, X-Amz-Target: secretsmanager.GetSecretValue,
// Content-Type: application/x-amz-json-1.1), for the SDK's endpoint
// override. It refuses requests that are not SigV4-signed for
// secretsmanager, serves the AWSCURRENT value of each secret (put() again
// rotates it), counts reads, and can answer with the service's error shape.
// Also sets the fake credentials the SDK signs with.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';

export const TEST_REGION = 'eu-west-1';
const ACCOUNT = '123456789012';

export interface RecordedRequest {
  target: string | undefined;
  contentType: string | undefined;
  authorization: string | undefined;
  secretId: string | undefined;
}

export interface SecretsManagerServer {
  url: string;
  /** Creates the secret, or rotates it: `value` becomes its AWSCURRENT version. Returns its ARN. */
  put(name: string, value: string): string;
  arn(name: string): string;
  /** GetSecretValue calls answered for `arn` (any secret when omitted), errors included. */
  reads(arn?: string): number;
  requests: RecordedRequest[];
  /** Answers the next `times` reads of `arn` with this service error (e.g. ResourceNotFoundException). */
  fail(arn: string, errorType: string, times?: number): void;
  close(): Promise<void>;
}

/** The credentials the SDK finds in the environment (nothing checks them beyond the signature's shape). */
export function useTestCredentials(): void {
  process.env.AWS_ACCESS_KEY_ID = 'AKIAWORKHORSETEST';
  process.env.AWS_SECRET_ACCESS_KEY = 'workhorse-test-secret-access-key';
  process.env.AWS_REGION = TEST_REGION;
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (d: string) => (body += d));
    req.on('end', () => resolve(body));
    req.on('error', reject);
  });
}

function reply(res: ServerResponse, status: number, body: unknown, errorType?: string): void {
  res.writeHead(status, {
    'content-type': 'application/x-amz-json-1.1',
    'x-amzn-requestid': randomUUID(),
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  res.end(JSON.stringify(body));
}

export async function startSecretsManagerServer(): Promise<SecretsManagerServer> {
  const secrets = new Map<string, { name: string; value: string; versionId: string; created: number }>();
  const failures = new Map<string, { errorType: string; times: number }>();
  const readCount = new Map<string, number>();
  const requests: RecordedRequest[] = [];
  const arn = (name: string) => `arn:aws:secretsmanager:${TEST_REGION}:${ACCOUNT}:secret:${name}-AbCdEf`;
  const lookup = (id: string) => [...secrets.keys()].find((a) => a === id || secrets.get(a)!.name === id || a.startsWith(`${id}-`));

  const server = createServer((req, res) => {
    void (async () => {
      const body = await readBody(req);
      const target = req.headers['x-amz-target'] as string | undefined;
      const parsed = (() => {
        try {
          return JSON.parse(body) as { SecretId?: string };
        } catch {
          return {};
        }
      })();
      requests.push({ target, contentType: req.headers['content-type'], authorization: req.headers.authorization, secretId: parsed.SecretId });
      const auth = req.headers.authorization ?? '';
      if (!/^AWS4-HMAC-SHA256 Credential=[^/]+\/\d{8}\/[a-z0-9-]+\/secretsmanager\/aws4_request, SignedHeaders=\S+, Signature=[0-9a-f]{64}$/.test(auth)) {
        return reply(res, 403, { __type: 'IncompleteSignatureException', message: 'request is not signed for secretsmanager' }, 'IncompleteSignatureException');
      }
      if (req.method !== 'POST' || target !== 'secretsmanager.GetSecretValue' || req.headers['content-type'] !== 'application/x-amz-json-1.1') {
        return reply(res, 400, { __type: 'InvalidRequestException', message: `unsupported: ${req.method} ${target}` }, 'InvalidRequestException');
      }
      const found = parsed.SecretId ? lookup(parsed.SecretId) : undefined;
      const key = found ?? parsed.SecretId;
      if (key) readCount.set(key, (readCount.get(key) ?? 0) + 1);
      const failure = found ? failures.get(found) : undefined;
      if (failure && failure.times > 0) {
        failure.times -= 1;
        return reply(res, 400, { __type: failure.errorType, message: `${failure.errorType} (simulated)` }, failure.errorType);
      }
      if (!found) {
        return reply(res, 400, { __type: 'ResourceNotFoundException', message: "Secrets Manager can't find the specified secret." }, 'ResourceNotFoundException');
      }
      const s = secrets.get(found)!;
      return reply(res, 200, {
        ARN: found,
        Name: s.name,
        VersionId: s.versionId,
        SecretString: s.value,
        VersionStages: ['AWSCURRENT'],
        CreatedDate: s.created,
      });
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    arn,
    put(name, value) {
      secrets.set(arn(name), { name, value, versionId: randomUUID(), created: Date.now() / 1000 });
      return arn(name);
    },
    reads: (a) => (a ? (readCount.get(a) ?? 0) : [...readCount.values()].reduce((x, y) => x + y, 0)),
    requests,
    fail(a, errorType, times = 1) {
      failures.set(a, { errorType, times });
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections(); // the SDK keeps its connections alive
      }),
  };
}
