// What the construct promises about secrets and logs, read back from the
// synthesised template of a stack that uses every kind of secret it takes:
// no function's environment holds a secret value or a dynamic reference to
// one (only ARNs); each function's role may get the value of exactly its own
// secrets; every function, the trigger provider's included, logs to a log
// group with a retention.
import { SecretValue } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { Key } from 'aws-cdk-lib/aws-kms';
import { Secret } from 'aws-cdk-lib/aws-secretsmanager';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_APP_MODULE } from '../../infra/exampleStack.js';
import { WorkhorseTickWorker } from '../../infra/WorkhorseTickWorker.js';
import { allStatements, asArray, logicalId, newStack, removeTestAssemblies, type Json } from './template.js';

afterAll(removeTestAssemblies);

const OWNER_PASSWORD = 'OWNER-PLAINTEXT-PASSWORD-1';
const SIGNING_VALUE = 'SIGNING-PLAINTEXT-VALUE-0123456789';
const NEXT_ARN = 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:workhorse/signing-next-AbCdEf';

describe('WorkhorseTickWorker secrets and logs', () => {
  let template: Template;
  let fns: Record<string, Json>;
  let ids: Record<'tick' | 'http' | 'migrate' | 'owner' | 'signing' | 'token' | 'tokens' | 'tokenKey', string>;
  let stack: ReturnType<typeof newStack>;

  beforeAll(() => {
    stack = newStack();
    const owner = new Secret(stack, 'Owner', {
      secretStringValue: SecretValue.unsafePlainText(JSON.stringify({ username: 'owner', password: OWNER_PASSWORD, host: 'db', port: 5432, dbname: 'app' })),
    });
    const runtime = Secret.fromSecretNameV2(stack, 'Runtime', 'prod/workhorse-runtime');
    const tokenKey = new Key(stack, 'TokenKey');
    new WorkhorseTickWorker(stack, 'Workhorse', {
      app: EXAMPLE_APP_MODULE,
      database: { secret: owner, shape: 'rds' },
      runtimeDatabase: { secret: runtime, shape: 'json', field: 'url' },
      maxFanout: 1,
      http: {
        signingSecret: new Secret(stack, 'Signing', { secretStringValue: SecretValue.unsafePlainText(SIGNING_VALUE) }),
        signingSecretNext: Secret.fromSecretCompleteArn(stack, 'SigningNext', NEXT_ARN),
        apiTokenSecret: new Secret(stack, 'Token', { encryptionKey: tokenKey }),
        secretEnvironment: { WORKHORSE_API_TOKENS: new Secret(stack, 'Tokens') },
      },
    });
    template = Template.fromStack(stack);
    fns = template.findResources('AWS::Lambda::Function');
    ids = {
      tick: logicalId(template, 'AWS::Lambda::Function', 'WorkhorseTick'),
      http: logicalId(template, 'AWS::Lambda::Function', 'WorkhorseHttp'),
      migrate: logicalId(template, 'AWS::Lambda::Function', 'WorkhorseMigrate'),
      owner: logicalId(template, 'AWS::SecretsManager::Secret', 'Owner'),
      signing: logicalId(template, 'AWS::SecretsManager::Secret', 'Signing'),
      token: logicalId(template, 'AWS::SecretsManager::Secret', 'Token', 'Tokens'),
      tokens: logicalId(template, 'AWS::SecretsManager::Secret', 'Tokens'),
      tokenKey: logicalId(template, 'AWS::KMS::Key', 'TokenKey'),
    };
  });

  it('holds no secret value and no dynamic reference in any function’s environment: only ARNs, in X_SECRET_ARN', () => {
    const secretIds = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
    expect(Object.keys(fns).length).toBeGreaterThanOrEqual(4);
    for (const [id, fn] of Object.entries(fns)) {
      const vars: Json = fn.Properties.Environment?.Variables ?? {};
      const text = JSON.stringify(vars);
      expect(text, id).not.toMatch(/\{\{resolve:/);
      expect(text, id).not.toContain(OWNER_PASSWORD);
      expect(text, id).not.toContain(SIGNING_VALUE);
      for (const [name, value] of Object.entries(vars)) {
        const v = JSON.stringify(value);
        if (secretIds.some((s) => v.includes(s)) || v.includes(':secret:')) {
          expect(name, `${id} ${name}`).toMatch(/_SECRET_ARN$/);
          // A Ref to a secret is its ARN; an imported secret's ARN is spelt out.
          expect(v).not.toMatch(/SecretString|Fn::GetAtt/);
        }
      }
    }
    const http = fns[ids.http]!.Properties.Environment.Variables;
    expect(http).toMatchObject({
      WORKHORSE_SIGNING_SECRET_SECRET_ARN: { Ref: ids.signing },
      WORKHORSE_SIGNING_SECRET_NEXT_SECRET_ARN: NEXT_ARN,
      WORKHORSE_API_TOKEN_SECRET_ARN: { Ref: ids.token },
      WORKHORSE_API_TOKENS_SECRET_ARN: { Ref: ids.tokens },
      DATABASE_URL_SECRET_TEMPLATE: '{{url|raw}}',
    });
    expect(fns[ids.migrate]!.Properties.Environment.Variables).toMatchObject({
      DATABASE_URL_SECRET_ARN: { Ref: ids.owner },
      DATABASE_URL_SECRET_TEMPLATE: 'postgres://{{username}}:{{password}}@{{host}}:{{port}}/{{dbname}}?sslmode=verify-full',
    });
  });

  /** secretsmanager and kms statements of the role the function runs as. */
  function roleStatements(fnId: string): Json[] {
    const roleId = fns[fnId]!.Properties.Role['Fn::GetAtt'][0] as string;
    const policies = template.findResources('AWS::IAM::Policy');
    const attached = new Set(Object.entries(policies).filter(([, p]) => asArray(p.Properties.Roles).some((r: Json) => r.Ref === roleId)).map(([id]) => id));
    return allStatements(template)
      .filter(({ owner }) => attached.has(owner) || owner === roleId)
      .map((s) => s.statement)
      .filter((s) => asArray(s.Action).some((a: string) => a.startsWith('secretsmanager:') || a.startsWith('kms:')));
  }

  it('lets each function’s role get the value of exactly its own secrets', () => {
    const runtimeArn = { 'Fn::Join': ['', ['arn:', { Ref: 'AWS::Partition' }, ':secretsmanager:', { Ref: 'AWS::Region' }, ':', { Ref: 'AWS::AccountId' }, ':secret:prod/workhorse-runtime-??????']] };
    const expected: Record<string, unknown[]> = {
      [ids.migrate]: [{ Ref: ids.owner }],
      [ids.tick]: [runtimeArn],
      [ids.http]: [runtimeArn, { Ref: ids.signing }, NEXT_ARN, { Ref: ids.token }, { Ref: ids.tokens }],
    };
    for (const [fnId, resources] of Object.entries(expected)) {
      const reads = roleStatements(fnId).filter((s) => asArray(s.Action).some((a: string) => a.startsWith('secretsmanager:')));
      expect(reads, fnId).toHaveLength(1);
      expect(reads[0]).toMatchObject({ Effect: 'Allow', Action: 'secretsmanager:GetSecretValue' });
      expect(asArray(reads[0]!.Resource), fnId).toEqual(resources);
    }
    // Only the HTTP function decrypts, only the token's key, only through Secrets Manager.
    const decrypts = Object.keys(fns).flatMap((id) => roleStatements(id).filter((s) => asArray(s.Action).includes('kms:Decrypt')).map((s) => [id, s] as const));
    expect(decrypts.map(([id]) => id)).toEqual([ids.http]);
    expect(decrypts[0]![1]).toMatchObject({
      Resource: { 'Fn::GetAtt': [ids.tokenKey, 'Arn'] },
      Condition: { StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['secretsmanager.', { Ref: 'AWS::Region' }, '.amazonaws.com']] } } },
    });
    // The trigger provider reads no secret at all.
    const provider = Object.keys(fns).find((id) => id.startsWith('AWSCDKTrigger'))!;
    expect(provider).toBeDefined();
    expect(roleStatements(provider)).toEqual([]);
  });

  it('logs every function, the trigger provider included, to a log group with a retention', () => {
    const groups = template.findResources('AWS::Logs::LogGroup');
    for (const [id, g] of Object.entries(groups)) expect(g.Properties.RetentionInDays, id).toBe(30);
    for (const [id, fn] of Object.entries(fns)) {
      const ref = fn.Properties.LoggingConfig?.LogGroup?.Ref as string | undefined;
      expect(ref, `${id} has a log group of its own`).toBeDefined();
      expect(groups[ref!], id).toBeDefined();
    }
    expect(Object.keys(fns).some((id) => id.startsWith('AWSCDKTrigger'))).toBe(true);
  });

  it('warns at synth when the runtime functions would use the owner credential, and not otherwise', () => {
    Annotations.fromStack(stack).hasNoWarning('*', Match.stringLikeRegexp('owner credential'));
    const shared = newStack();
    new WorkhorseTickWorker(shared, 'Workhorse', { app: EXAMPLE_APP_MODULE, database: { secret: new Secret(shared, 'Db') } });
    Annotations.fromStack(shared).hasWarning('/Test/Workhorse', Match.stringLikeRegexp('use the owner credential that migrates'));
  });
});
