// Variables given as Secrets Manager secrets (src/secrets/), read through
// the real @aws-sdk/client-secrets-manager from a local endpoint that speaks
// the service's JSON protocol: once per container, again at the maximum age
// and on request after a failed credential (never twice within the refresh
// interval), templates for JSON secrets, and the errors for what cannot work.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadRuntimeEnvironment } from '../../src/config.js';
import { ConfigError, SecretUnavailableError } from '../../src/errors.js';
import { lambdaEnvironment } from '../../src/secrets/lambdaEnvironment.js';
import { SecretEnvironment } from '../../src/secrets/secretEnvironment.js';
import { secretsManagerSource } from '../../src/secrets/secretsManager.js';
import { startSecretsManagerServer, TEST_REGION, useTestCredentials, type SecretsManagerServer } from '../helpers/secretsManagerServer.js';

let sm: SecretsManagerServer;

beforeAll(async () => {
  useTestCredentials();
  sm = await startSecretsManagerServer();
});

afterAll(async () => {
  await sm?.close();
});

/** A SecretEnvironment on the local endpoint whose clock the test moves. */
function environmentAt(env: Record<string, string>, clock: { now: number }, o: { maxAgeMs?: number; minRefreshMs?: number } = {}) {
  const { env: base, secrets } = loadRuntimeEnvironment(env);
  const logged: unknown[] = [];
  const environment = new SecretEnvironment(base, {
    references: secrets.references,
    source: () => secretsManagerSource({ endpoint: sm.url }),
    maxAgeMs: o.maxAgeMs ?? 60_000,
    minRefreshMs: o.minRefreshMs ?? 10_000,
    now: () => clock.now,
    log: (_line, err) => logged.push(err),
  });
  return { environment, logged };
}

describe('a variable given as X_SECRET_ARN', () => {
  it('is read from Secrets Manager into X, with a signed GetSecretValue call in the JSON protocol', async () => {
    const arn = sm.put('wh/signing', 'signing-secret-value-0123456789');
    const before = sm.requests.length;
    const environment = lambdaEnvironment({
      env: { WORKHORSE_SIGNING_SECRET_SECRET_ARN: arn, WORKHORSE_SECRETS_ENDPOINT: sm.url, WORKHORSE_NAMESPACE: 'billing' },
    });
    const { env, version } = await environment.current();
    expect(env.WORKHORSE_SIGNING_SECRET).toBe('signing-secret-value-0123456789');
    expect(env.WORKHORSE_NAMESPACE).toBe('billing');
    expect(version).toBe(1);
    const [req] = sm.requests.slice(before);
    expect(req).toMatchObject({ target: 'secretsmanager.GetSecretValue', contentType: 'application/x-amz-json-1.1', secretId: arn });
    expect(req!.authorization).toContain(`/${TEST_REGION}/secretsmanager/aws4_request`);
  });

  it('is read once per container: later invocations use the cached value', async () => {
    const arn = sm.put('wh/once', 'value-read-once-0123456789');
    const clock = { now: 1_000_000 };
    const { environment } = environmentAt({ DATABASE_URL_SECRET_ARN: arn }, clock);
    for (let i = 0; i < 5; i++) {
      clock.now += 1000;
      expect((await environment.current()).env.DATABASE_URL).toBe('value-read-once-0123456789');
    }
    expect(sm.reads(arn)).toBe(1);
  });

  it('is read again once older than the maximum age, so a rotation arrives without a redeploy', async () => {
    const arn = sm.put('wh/aging', 'first-value-0123456789');
    const clock = { now: 1_000_000 };
    const { environment } = environmentAt({ WORKHORSE_API_TOKEN_SECRET_ARN: arn }, clock, { maxAgeMs: 60_000 });
    expect((await environment.current()).env.WORKHORSE_API_TOKEN).toBe('first-value-0123456789');
    sm.put('wh/aging', 'second-value-0123456789');
    clock.now += 59_000;
    expect((await environment.current()).env.WORKHORSE_API_TOKEN).toBe('first-value-0123456789');
    clock.now += 1_000;
    const after = await environment.current();
    expect(after.env.WORKHORSE_API_TOKEN).toBe('second-value-0123456789');
    expect(after.version).toBe(2);
    expect(sm.reads(arn)).toBe(2);
  });

  it('is read again on request after a failed credential, at most once per refresh interval however many ask', async () => {
    const arn = sm.put('wh/flood', 'old-token-0123456789');
    const other = sm.put('wh/untouched', 'postgres://u:p@db/app');
    const clock = { now: 1_000_000 };
    const { environment } = environmentAt({ WORKHORSE_API_TOKEN_SECRET_ARN: arn, DATABASE_URL_SECRET_ARN: other }, clock, { minRefreshMs: 10_000 });
    await environment.current();
    sm.put('wh/flood', 'new-token-0123456789');
    clock.now += 10_000;
    const flood = await Promise.all(Array.from({ length: 50 }, () => environment.refresh((v) => v !== 'DATABASE_URL')));
    expect(flood.filter(Boolean).length).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 50; i++) expect(await environment.refresh((v) => v !== 'DATABASE_URL')).toBe(false);
    expect((await environment.current()).env.WORKHORSE_API_TOKEN).toBe('new-token-0123456789');
    expect(sm.reads(arn)).toBe(2);
    // Only the variables asked for were read again.
    expect(sm.reads(other)).toBe(1);
  });

  it('reports no change when the secret still holds the same value', async () => {
    const arn = sm.put('wh/same', 'unchanged-0123456789');
    const clock = { now: 1_000_000 };
    const { environment } = environmentAt({ DATABASE_URL_SECRET_ARN: arn }, clock, { minRefreshMs: 0 });
    await environment.current();
    expect(await environment.refresh(() => true)).toBe(false);
    expect((await environment.current()).version).toBe(1);
    expect(sm.reads(arn)).toBe(2);
  });

  it('keeps the last good value when a re-read fails, and logs it', async () => {
    const arn = sm.put('wh/flaky', 'good-value-0123456789');
    const clock = { now: 1_000_000 };
    const { environment, logged } = environmentAt({ DATABASE_URL_SECRET_ARN: arn }, clock, { maxAgeMs: 1_000, minRefreshMs: 0 });
    await environment.current();
    sm.fail(arn, 'AccessDeniedException');
    clock.now += 5_000;
    expect((await environment.current()).env.DATABASE_URL).toBe('good-value-0123456789');
    expect(logged).toHaveLength(1);
    expect(logged[0]).toBeInstanceOf(SecretUnavailableError);
    expect((logged[0] as Error).message).toMatch(/DATABASE_URL: could not read secret .*AccessDeniedException/);
  });

  it('fails with SecretUnavailableError naming the variable and the ARN when the first read fails, and tries again later', async () => {
    const arn = sm.arn('wh/missing');
    const clock = { now: 1_000_000 };
    const { environment } = environmentAt({ DATABASE_URL_SECRET_ARN: arn }, clock, { minRefreshMs: 10_000 });
    const err = await environment.current().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretUnavailableError);
    expect(err).toMatchObject({ code: 'secret_unavailable', variable: 'DATABASE_URL', secretArn: arn });
    expect((err as Error).message).toMatch(/ResourceNotFoundException/);
    // Within the refresh interval the same error comes back without a call.
    await expect(environment.current()).rejects.toBe(err);
    expect(sm.reads(arn)).toBe(1);
    sm.put('wh/missing', 'now-it-exists-0123456789');
    clock.now += 10_000;
    expect((await environment.current()).env.DATABASE_URL).toBe('now-it-exists-0123456789');
  });

  it('never loads the SDK when no variable is a secret', async () => {
    let created = 0;
    const { env: base, secrets } = loadRuntimeEnvironment({ DATABASE_URL: 'postgres://plain@db/app' });
    const environment = new SecretEnvironment(base, {
      references: secrets.references,
      source: () => {
        created += 1;
        return secretsManagerSource({ endpoint: sm.url });
      },
      maxAgeMs: 1,
      minRefreshMs: 0,
    });
    expect((await environment.current()).env.DATABASE_URL).toBe('postgres://plain@db/app');
    expect(await environment.refresh(() => true)).toBe(false);
    expect(created).toBe(0);
  });
});

describe('a variable with X_SECRET_TEMPLATE', () => {
  const rds = { username: 'app', password: 'p@ss:w/rd#?%&', host: 'db.example.internal', port: 5432, dbname: 'jobs' };

  it('is composed from the JSON secret’s fields, percent-encoded, so any password survives the URL', async () => {
    const arn = sm.put('wh/rds', JSON.stringify(rds));
    const environment = lambdaEnvironment({
      env: {
        DATABASE_URL_SECRET_ARN: arn,
        DATABASE_URL_SECRET_TEMPLATE: 'postgres://{{username}}:{{password}}@{{host}}:{{port}}/{{dbname}}?sslmode=verify-full',
        WORKHORSE_SECRETS_ENDPOINT: sm.url,
      },
    });
    const url = (await environment.current()).env.DATABASE_URL!;
    expect(url).toBe('postgres://app:p%40ss%3Aw%2Frd%23%3F%25%26@db.example.internal:5432/jobs?sslmode=verify-full');
    const parsed = new URL(url);
    expect(decodeURIComponent(parsed.password)).toBe(rds.password);
  });

  it('inserts a {{field|raw}} as it is (a whole URL kept in one field)', async () => {
    const arn = sm.put('wh/json-url', JSON.stringify({ url: 'postgres://u:p@db:5432/app', other: 1 }));
    const environment = lambdaEnvironment({
      env: { DATABASE_URL_SECRET_ARN: arn, DATABASE_URL_SECRET_TEMPLATE: '{{url|raw}}', WORKHORSE_SECRETS_ENDPOINT: sm.url },
    });
    expect((await environment.current()).env.DATABASE_URL).toBe('postgres://u:p@db:5432/app');
  });

  it('fails with SecretUnavailableError, without the value, when the secret lacks a field or is not JSON', async () => {
    const partial = sm.put('wh/partial', JSON.stringify({ username: 'app', password: 'hunter2-secret' }));
    const notJson = sm.put('wh/plain', 'hunter2-secret');
    const template = 'postgres://{{username}}:{{password}}@{{host}}/app';
    for (const [arn, reason] of [
      [partial, /no string or number field "host"/],
      [notJson, /not JSON/],
    ] as const) {
      const environment = lambdaEnvironment({ env: { DATABASE_URL_SECRET_ARN: arn, DATABASE_URL_SECRET_TEMPLATE: template, WORKHORSE_SECRETS_ENDPOINT: sm.url } });
      const err = (await environment.current().catch((e: unknown) => e)) as Error;
      expect(err).toBeInstanceOf(SecretUnavailableError);
      expect(err.message).toMatch(reason);
      expect(err.message).not.toContain('hunter2');
    }
  });
});

describe('secret references that cannot work', () => {
  const arn = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:wh/x-AbCdEf';
  const cases: [string, Record<string, string>, RegExp][] = [
    ['a variable set both ways', { DATABASE_URL: 'postgres://a@b/c', DATABASE_URL_SECRET_ARN: arn }, /DATABASE_URL_SECRET_ARN: give DATABASE_URL or DATABASE_URL_SECRET_ARN, not both/],
    ['a value that is not a secret ARN', { DATABASE_URL_SECRET_ARN: 'workhorse/database' }, /DATABASE_URL_SECRET_ARN: expected a Secrets Manager secret ARN/],
    ['a template without its secret', { DATABASE_URL_SECRET_TEMPLATE: 'postgres://{{user}}@db/app' }, /DATABASE_URL_SECRET_TEMPLATE: a template needs the secret it reads/],
    ['a template without placeholders', { DATABASE_URL_SECRET_ARN: arn, DATABASE_URL_SECRET_TEMPLATE: 'postgres://db/app' }, /needs at least one \{\{field\}\}/],
    ['a malformed placeholder', { DATABASE_URL_SECRET_ARN: arn, DATABASE_URL_SECRET_TEMPLATE: 'postgres://{{user name}}@db' }, /placeholders are \{\{field\}\} or \{\{field\|raw\}\}/],
    ['a bad refresh interval', { WORKHORSE_SECRETS_MIN_REFRESH_MS: 'often' }, /WORKHORSE_SECRETS_MIN_REFRESH_MS/],
  ];
  for (const [what, env, message] of cases) {
    it(`rejects ${what} with a ConfigError naming the variable`, () => {
      expect(() => loadRuntimeEnvironment(env)).toThrow(ConfigError);
      expect(() => loadRuntimeEnvironment(env)).toThrow(message);
    });
  }
});
